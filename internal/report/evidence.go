package report

import (
	"encoding/json"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/bmc"
	"github.com/bootstrap-dev/bootstrap/internal/finding"
	"github.com/bootstrap-dev/bootstrap/internal/fsroot"
	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
	"github.com/bootstrap-dev/bootstrap/internal/stages"
)

// Evidence is what the stages left in the work dir and the journal, read for the report. Each
// part is read from the file or the journal records its stage writes; a part whose source is
// absent stays empty.
type Evidence struct {
	Preflight []Check         `json:"preflight,omitempty"`
	Images    []Image         `json:"images,omitempty"`
	BMC       []NodeActions   `json:"bmc,omitempty"`
	Applied   []AppliedObject `json:"applied,omitempty"` // every object configure and handoff applied
	Versions  []Version       `json:"versions,omitempty"`
	// Persistent lists the nodes whose BMC did not honour a one-time boot: they were booted with
	// a persistent Cd override, which the install stage must take off.
	Persistent []PersistentNode `json:"persistentOverride,omitempty"`
	// Boot is each node's boot verdict: the evidence of its reboot into the ISO, or why it is
	// "booted, unverified" (stages.NodeBoots).
	Boot []stages.NodeBoot `json:"boot,omitempty"`
}

// PersistentNode is a node booted with a persistent override, and whether it was handed over.
type PersistentNode struct {
	Node   string `json:"node"`
	Reason string `json:"reason,omitempty"`
	// HandedOver is the handover's result (override read back, ISO ejected), empty while pending.
	HandedOver string `json:"handedOver,omitempty"`
}

// Check is one preflight result (preflight.json): the check's name and category and its finding.
type Check struct {
	Name     string `json:"name"`
	Category string `json:"category"`
	finding.Finding
}

// Image is one mirrored image (content.json, mirror.ImageResult's fields).
type Image struct {
	Source      string `json:"source"`
	Destination string `json:"dest"`
	Kind        string `json:"kind,omitempty"`
	Origin      string `json:"origin,omitempty"`
	Digest      string `json:"digest"`
	Size        int64  `json:"size"`
	Error       string `json:"error,omitempty"`
}

// NodeActions are the journaled steps of one node, of every attempt, in journal order.
type NodeActions struct {
	Node    string   `json:"node"`
	Actions []Action `json:"actions"`
}

// Action is one journaled node step, attributed to the stage attempt and the run that did it.
type Action struct {
	Seq     int64           `json:"seq"`
	Time    time.Time       `json:"time"`
	Run     int64           `json:"run"`
	Stage   string          `json:"stage"`
	Attempt int             `json:"attempt"`
	Action  string          `json:"action"`
	Data    json.RawMessage `json:"data,omitempty"`
	// Note explains bookkeeping records that sent no request to the BMC.
	Note string `json:"note,omitempty"`
}

// AppliedObject is one Kubernetes object configure or handoff applied (server-side apply), from
// the step that journaled it.
type AppliedObject struct {
	Stage      string    `json:"stage"`
	Attempt    int       `json:"attempt"`
	Run        int64     `json:"run"`
	Time       time.Time `json:"time"` // when the apply was journaled
	APIVersion string    `json:"apiVersion"`
	Kind       string    `json:"kind"`
	Namespace  string    `json:"namespace,omitempty"`
	Name       string    `json:"name"`
	Action     string    `json:"action"`
	SHA256     string    `json:"sha256,omitempty"`
	Source     string    `json:"source,omitempty"`
}

// SecretNotHashed stands in the report for the SHA-256 of a Secret, which is never recorded.
const SecretNotHashed = "not recorded: the hash of a Secret would fingerprint its value"

// Object is "Kind namespace/name" or "Kind name".
func (a AppliedObject) Object() string {
	if a.Namespace != "" {
		return a.Kind + " " + a.Namespace + "/" + a.Name
	}
	return a.Kind + " " + a.Name
}

// Version is one tool or peer version the run saw.
type Version struct {
	Component string `json:"component"`
	Version   string `json:"version"`
	Detail    string `json:"detail,omitempty"`
	Source    string `json:"source"` // which record it comes from
}

// Notes on the boot stage's records that are not themselves BMC requests (bmc.StepPowerIntent,
// and the markers of internal/stages/bootcarry.go).
var bookkeeping = map[string]string{
	bmc.StepPowerIntent: "journaled just before the power request, so a resumed run reads back whether it reached the BMC",
	"inputs":            "no BMC request: the node's input fingerprint, recorded before this attempt acted on it",
	"carried":           "no BMC request: this attempt kept the node's steps of an earlier attempt (inputs unchanged)",
}

func readEvidence(dir string, h pipeline.History) Evidence {
	var ev Evidence
	var pf struct {
		Checks []Check `json:"checks"`
	}
	if readJSON(filepath.Join(dir, "preflight.json"), &pf) {
		ev.Preflight = pf.Checks
	}
	var content struct {
		Images []json.RawMessage `json:"images"`
	}
	if readJSON(filepath.Join(dir, "content.json"), &content) {
		for _, raw := range content.Images {
			var im Image
			if json.Unmarshal(raw, &im) == nil {
				ev.Images = append(ev.Images, im)
			}
		}
	}
	byNode := map[string]*NodeActions{}
	for _, a := range h.Attempts {
		for _, s := range a.Steps {
			node := s.Node()
			if node == "" {
				continue
			}
			na := byNode[node]
			if na == nil {
				na = &NodeActions{Node: node}
				byNode[node] = na
			}
			act := s.Action()
			na.Actions = append(na.Actions, Action{Seq: s.Seq, Time: s.Time, Run: s.Run, Stage: a.Stage, Attempt: a.Attempt,
				Action: act, Data: s.Data, Note: bookkeeping[act]})
		}
		if a.Stage == stages.NameConfigure || a.Stage == stages.NameHandoff {
			ev.Applied = append(ev.Applied, applied(a)...)
		}
	}
	for _, na := range byNode {
		sort.Slice(na.Actions, func(i, j int) bool { return na.Actions[i].Seq < na.Actions[j].Seq })
		ev.BMC = append(ev.BMC, *na)
	}
	sort.Slice(ev.BMC, func(i, j int) bool { return ev.BMC[i].Node < ev.BMC[j].Node })
	sort.SliceStable(ev.Applied, func(i, j int) bool { return ev.Applied[i].Time.Before(ev.Applied[j].Time) })
	ev.Versions = versions(h, ev.BMC)
	ev.Persistent = persistentNodes(ev.BMC)
	ev.Boot = stages.NodeBoots(h)
	return ev
}

// persistentNodes finds the boot-override steps that chose a persistent override, and the
// install stage's handover of each node.
func persistentNodes(nodes []NodeActions) []PersistentNode {
	var out []PersistentNode
	for _, n := range nodes {
		var p *PersistentNode
		for _, a := range n.Actions {
			var d struct {
				Method   string   `json:"method"`
				Reason   string   `json:"reason"`
				Override string   `json:"override"`
				Ejected  []string `json:"ejected"`
			}
			if json.Unmarshal(a.Data, &d) != nil {
				continue
			}
			switch {
			case a.Action == bmc.StepBootOverride && d.Method == bmc.MethodContinuous:
				p = &PersistentNode{Node: n.Node, Reason: d.Reason}
			case a.Action == "override-off" && p != nil && p.HandedOver == "":
				p.HandedOver = "override " + d.Override + " (ISO still inserted)"
			case a.Action == bmc.StepHandover && p != nil:
				p.HandedOver = "override " + d.Override
				if len(d.Ejected) > 0 {
					p.HandedOver += ", ISO ejected from " + strings.Join(d.Ejected, ", ")
				}
			}
		}
		if p != nil {
			out = append(out, *p)
		}
	}
	return out
}

// appliedStep is the step key under which configure and handoff journal what each apply did
// (stages.AppliedStep: {"objects": [cluster.Applied...], "changed": n}).
const appliedStep = "applied"

// applied lists the objects of every applied step of a configure or handoff attempt, with the
// time and run of the step: applies of attempts that failed afterwards count too.
func applied(a pipeline.AttemptRecord) []AppliedObject {
	var out []AppliedObject
	for _, s := range a.Steps {
		if s.Key != appliedStep {
			continue
		}
		var rec struct {
			Objects []AppliedObject `json:"objects"`
		}
		if json.Unmarshal(s.Data, &rec) != nil {
			continue
		}
		for _, o := range rec.Objects {
			o.Stage, o.Attempt, o.Run, o.Time = a.Stage, a.Attempt, s.Run, s.Time
			out = append(out, o)
		}
	}
	return out
}

// versions collects the versions the run recorded: bootstrap itself (each run), openshift-install
// and the release (iso), each node's BMC firmware (boot), the cluster (install) and the GitOps
// operator (handoff). A version recorded several times is listed once, with its latest source.
func versions(h pipeline.History, nodes []NodeActions) []Version {
	var out []Version
	seen := map[string]int{}
	add := func(v Version) {
		if v.Version == "" {
			return
		}
		k := v.Component + "\x00" + v.Version + "\x00" + v.Detail
		if i, ok := seen[k]; ok {
			out[i].Source = v.Source
			return
		}
		seen[k] = len(out)
		out = append(out, v)
	}
	for _, r := range h.Runs {
		add(Version{Component: "bootstrap", Version: r.Info.Version, Detail: "on " + r.Info.Host,
			Source: "run " + itoa(r.Seq) + " (" + runCommand(r.Info) + ")"})
	}
	for _, a := range h.Attempts {
		if a.State != pipeline.StateSucceeded || len(a.Output) == 0 {
			continue
		}
		src := a.Stage + " attempt " + itoa(int64(a.Attempt))
		switch a.Stage {
		case stages.NameISO:
			if o, err := stages.ISOOutputKey.Decode(a.Output); err == nil && o.Build != nil {
				add(Version{Component: "openshift-install", Version: o.Build.InstallerVersion, Detail: o.Build.InstallerPath, Source: src})
				add(Version{Component: "release image", Version: o.Build.ReleaseImage, Source: src})
			}
		case stages.NameInstall:
			if o, err := stages.InstallOutputKey.Decode(a.Output); err == nil {
				add(Version{Component: "OpenShift (ClusterVersion)", Version: o.Cluster.Version,
					Detail: itoa(int64(o.Cluster.Operators)) + " cluster operators, nodes " + strings.Join(o.Cluster.Nodes, " "), Source: src})
			}
		case stages.NameHandoff:
			if o, err := stages.HandoffOutputKey.Decode(a.Output); err == nil {
				add(Version{Component: "OpenShift GitOps operator", Version: o.CSV, Source: src})
			}
		}
	}
	for _, n := range nodes {
		for _, a := range n.Actions {
			if a.Action != bmc.StepConfirm {
				continue
			}
			var r bmc.NodeResult
			if json.Unmarshal(a.Data, &r) == nil {
				add(Version{Component: "BMC " + n.Node, Version: r.Firmware, Detail: strings.TrimSpace(r.Vendor + " " + r.Model),
					Source: a.Stage + " attempt " + itoa(int64(a.Attempt)) + " (seq " + itoa(a.Seq) + ")"})
			}
		}
	}
	return out
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func readJSON(path string, v any) bool {
	b, err := fsroot.ReadFile(path, fsroot.Content)
	return err == nil && json.Unmarshal(b, v) == nil
}
