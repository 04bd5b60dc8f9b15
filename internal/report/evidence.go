package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
)

// Evidence is what the stages left in the work dir, read for the report. Each part is read from
// the file its stage writes; a part whose file is absent stays empty.
type Evidence struct {
	Preflight []Check            `json:"preflight,omitempty"`
	Images    []Image            `json:"images,omitempty"`
	BMC       []NodeActions      `json:"bmc,omitempty"`
	Applied   []Step             `json:"applied,omitempty"` // configure and handoff steps
	Runs      []pipeline.RunInfo `json:"runs,omitempty"`
}

// Check is one preflight result (preflight.json).
type Check struct {
	Name     string `json:"name"`
	Category string `json:"category"`
	Status   string `json:"status"`
	Message  string `json:"message"`
	Remedy   string `json:"remedy,omitempty"`
}

// Image is one mirrored image (content.json).
type Image struct {
	Source      string `json:"source"`
	Destination string `json:"destination"`
	Digest      string `json:"digest"`
	Size        int64  `json:"size"`
	Error       string `json:"error,omitempty"`
}

// NodeActions are the journaled BMC steps of one node, in order.
type NodeActions struct {
	Node    string   `json:"node"`
	Actions []Action `json:"actions"`
}

// Action is one journaled node step.
type Action struct {
	Time   time.Time       `json:"time"`
	Stage  string          `json:"stage"`
	Action string          `json:"action"`
	Data   json.RawMessage `json:"data,omitempty"`
}

const nodePrefix = "node:"

func readEvidence(dir string, entries []pipeline.Entry, steps map[string][]Step) Evidence {
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
	for stage, ss := range steps {
		for _, s := range ss {
			if !strings.HasPrefix(s.Key, nodePrefix) {
				if stage == "configure" || stage == "handoff" {
					ev.Applied = append(ev.Applied, s)
				}
				continue
			}
			node, action, _ := strings.Cut(strings.TrimPrefix(s.Key, nodePrefix), "/")
			na := byNode[node]
			if na == nil {
				na = &NodeActions{Node: node}
				byNode[node] = na
			}
			na.Actions = append(na.Actions, Action{Time: s.Time, Stage: stage, Action: action, Data: s.Data})
		}
	}
	for _, na := range byNode {
		sort.SliceStable(na.Actions, func(i, j int) bool { return na.Actions[i].Time.Before(na.Actions[j].Time) })
		ev.BMC = append(ev.BMC, *na)
	}
	sort.Slice(ev.BMC, func(i, j int) bool { return ev.BMC[i].Node < ev.BMC[j].Node })
	sort.SliceStable(ev.Applied, func(i, j int) bool { return ev.Applied[i].Seq < ev.Applied[j].Seq })
	for _, e := range entries {
		if e.Kind != pipeline.EntryRunStarted {
			continue
		}
		var ri pipeline.RunInfo
		if json.Unmarshal(e.Data, &ri) == nil {
			ev.Runs = append(ev.Runs, ri)
		}
	}
	return ev
}

func readJSON(path string, v any) bool {
	b, err := os.ReadFile(path)
	return err == nil && json.Unmarshal(b, v) == nil
}
