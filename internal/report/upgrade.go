package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/cluster"
	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade"
)

// UpgradeDir is where `bootstrap upgrade run` keeps its own journal, inside the work dir.
const UpgradeDir = "upgrade"

// Upgrade is the evidence of the day-2 upgrades, read from their own journal
// (upgrade/journal.jsonl, a hash chain witnessed by its own journal.head; see internal/upgrade
// doc.go for why it is not the day-1 journal): each hop's steps in the order they were
// journaled, with what each one recorded.
type Upgrade struct {
	Chain Chain         `json:"chain"`
	Hops  []UpgradeHop  `json:"hops"`
	Trips []UpgradeTrip `json:"trips,omitempty"`
}

// UpgradeHop is one hop: its state now and its journaled steps.
type UpgradeHop struct {
	Hop   string        `json:"hop"` // the stage name, hop-<version>
	State string        `json:"state"`
	Steps []UpgradeStep `json:"steps"`
}

// UpgradeStep is one journaled step of a hop, with a line for people.
type UpgradeStep struct {
	Time   time.Time       `json:"time"`
	Step   string          `json:"step"`
	Detail string          `json:"detail"`
	Data   json.RawMessage `json:"data,omitempty"`
}

// UpgradeTrip is a hop that stopped: when, the journaled error and remedy.
type UpgradeTrip struct {
	Time   time.Time `json:"time"`
	Hop    string    `json:"hop"`
	Error  string    `json:"error"`
	Remedy string    `json:"remedy,omitempty"`
}

// readUpgrade reads the upgrade journal under workDir; nil when no upgrade ran there.
func readUpgrade(workDir string) (*Upgrade, error) {
	dir := filepath.Join(workDir, UpgradeDir)
	if _, err := os.Stat(pipeline.JournalPath(dir)); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	st, entries, err := (&pipeline.Runner{WorkDir: dir}).StatusEntries()
	if err != nil {
		return nil, fmt.Errorf("upgrade journal: %w", err)
	}
	u := &Upgrade{Chain: Chain{Verified: st.Chain == "", Entries: st.Entries, Head: st.Head, Error: st.Chain}}
	hops := map[string]*UpgradeHop{}
	var order []string
	for _, e := range entries {
		if e.Stage == "" {
			continue
		}
		h := hops[e.Stage]
		if h == nil {
			h = &UpgradeHop{Hop: e.Stage, State: "running"}
			hops[e.Stage] = h
			order = append(order, e.Stage)
		}
		switch e.Kind {
		case pipeline.EntryStepDone:
			_, step, _ := strings.Cut(e.Step, "/")
			h.Steps = append(h.Steps, UpgradeStep{Time: e.Time, Step: step, Detail: stepDetail(step, e.Data), Data: e.Data})
		case pipeline.EntryStageSucceeded:
			h.State = "succeeded"
		case pipeline.EntryStageFailed:
			h.State = "stopped"
			u.Trips = append(u.Trips, UpgradeTrip{Time: e.Time, Hop: e.Stage, Error: e.Error, Remedy: e.Remedy})
		case pipeline.EntryStageStarted:
			h.State = "running"
		}
	}
	for _, s := range order {
		u.Hops = append(u.Hops, *hops[s])
	}
	return u, nil
}

// stepDetail says what a step's record shows; an unknown record is shown as it is.
func stepDetail(step string, raw json.RawMessage) string {
	var d struct {
		AcceptedBy, SHA256, Skipped, Node, Pool, Soak, Found string
		Reused                                               string
		MaxUnavailable                                       string
		Written                                              bool
		Files                                                []upgrade.BackupFile
		Objects                                              []cluster.Applied
		Approved, Left, Pools, HealthChecks, AlreadyPaused   []string
		AlreadyApproved                                      []string
		Kind, Object, Sentence                               string
		Transitions                                          []upgrade.Transition
		DesiredUpdate                                        upgrade.DesiredUpdate
		History                                              upgrade.HistoryEntry
		Nodes                                                map[string][]upgrade.Transition
	}
	_ = json.Unmarshal(raw, &d)
	switch {
	case d.Skipped != "":
		return "skipped: " + d.Skipped
	case step == upgrade.StepSettings:
		var r upgrade.SettingsRecord
		_ = json.Unmarshal(raw, &r)
		var parts []string
		for _, x := range r.Settings {
			parts = append(parts, fmt.Sprintf("%s %s (%s)", x.Name, x.Value, x.Source))
		}
		return "settings: " + or(strings.Join(parts, "; "), "none recorded")
	case step == upgrade.StepContract:
		return fmt.Sprintf("rollback contract accepted by %s (text sha256 %s)", d.AcceptedBy, d.SHA256)
	case step == upgrade.StepBackup || step == upgrade.StepAfterBackup:
		var fs []string
		for _, f := range d.Files {
			fs = append(fs, fmt.Sprintf("%s (%d bytes, sha256 %s)", f.Name, f.Size, f.SHA256))
		}
		when := map[bool]string{true: "before", false: "after"}[step == upgrade.StepBackup]
		s := fmt.Sprintf("etcd backup %s the hop on %s: %s", when, d.Node, strings.Join(fs, "; "))
		if d.Reused != "" {
			s += " (reused: " + d.Reused + ")"
		}
		return s
	case step == upgrade.StepHealthPause:
		return fmt.Sprintf("MachineHealthChecks paused (%s): %s; already paused, left as they were: %s", upgrade.MHCPausedAnnotation,
			or(strings.Join(d.HealthChecks, ", "), "none"), or(strings.Join(d.AlreadyPaused, ", "), "none"))
	case step == upgrade.StepSignatures || step == upgrade.StepMirror:
		var objs []string
		for _, o := range d.Objects {
			objs = append(objs, o.Ref.String()+" "+string(o.Action)+" sha256 "+o.SHA256)
		}
		what := map[bool]string{true: "signature ConfigMaps", false: "IDMS/ITMS/CatalogSources"}[step == upgrade.StepSignatures]
		return what + ": " + or(strings.Join(objs, ", "), "none")
	case step == upgrade.StepSubscriptions:
		var m upgrade.SubscriptionMoves
		_ = json.Unmarshal(raw, &m)
		return fmt.Sprintf("Subscriptions moved to the next minor's CatalogSource: %s; found already moved (by a run killed before its record, or by hand): %s",
			or(strings.Join(m.Moved, "; "), "none"), or(strings.Join(m.Found, "; "), "none"))
	case step == upgrade.StepInstallPlans || step == upgrade.StepAfterPlans:
		s := fmt.Sprintf("InstallPlans approved: %s; left unapproved: %s", or(strings.Join(d.Approved, "; "), "none"), or(strings.Join(d.Left, "; "), "none"))
		if len(d.AlreadyApproved) > 0 {
			s += "; found approved (by a run killed before its record, or by hand): " + strings.Join(d.AlreadyApproved, "; ")
		}
		var u upgrade.OperatorUpdates
		_ = json.Unmarshal(raw, &u)
		var seen []string
		for _, c := range u.Installed {
			seen = append(seen, fmt.Sprintf("%s (Subscription %s, %s at %s)", c.CSV, c.Subscription, c.Phase, c.At.UTC().Format(time.RFC3339)))
		}
		if len(seen) > 0 {
			s += "; installed, as seen: " + strings.Join(seen, "; ")
		}
		return s
	case strings.HasPrefix(step, upgrade.StepNodes+"/"):
		return "node " + strings.TrimPrefix(step, upgrade.StepNodes+"/") + " Done on " + transitions(d.Transitions)
	case step == upgrade.StepTrip:
		return "stopped (" + d.Kind + "): " + d.Sentence
	case step == upgrade.StepCanary:
		return fmt.Sprintf("canary pool %s holds node %s", d.Pool, d.Node)
	case step == upgrade.StepPause:
		return "paused: " + or(strings.Join(d.Pools, ", "), "no pool")
	case step == upgrade.StepUnpause:
		s := "unpaused: " + or(strings.Join(d.Pools, ", "), "no pool")
		if d.MaxUnavailable != "" {
			s += " (maxUnavailable " + d.MaxUnavailable + ")"
		}
		return s
	case step == upgrade.StepIntent:
		return fmt.Sprintf("about to set desiredUpdate to %s (journaled before the write, so a kill after it is found on resume)", d.DesiredUpdate.Version)
	case step == upgrade.StepSoak:
		return "the canary soaked " + d.Soak + " with the other pools paused"
	case step == upgrade.StepWorkers:
		return "every pool updated"
	case step == upgrade.StepDesired:
		if !d.Written {
			return fmt.Sprintf("desiredUpdate %s (%s) found set after a kill: %s", d.DesiredUpdate.Version, d.DesiredUpdate.Image, d.Found)
		}
		return fmt.Sprintf("desiredUpdate set to %s (%s), force false", d.DesiredUpdate.Version, d.DesiredUpdate.Image)
	case step == upgrade.StepControlPlane:
		return fmt.Sprintf("ClusterVersion history %s %s, signature verified by the CVO: %t", d.History.Version, d.History.State, d.History.Verified)
	case step == upgrade.StepCanaryDone:
		var ev upgrade.NodeEvidence
		_ = json.Unmarshal(raw, &ev)
		s := fmt.Sprintf("canary %s on %s: OS %q -> %q (build %s)", ev.Node, ev.Config, ev.OSImageBefore, ev.OSImage, or(ev.OSBuild, "-"))
		if ev.DriverPod != "" {
			s += "; GPU driver pod " + ev.DriverPod + " Ready"
		}
		if len(ev.Blacklist) > 0 {
			s += "; " + strings.Join(ev.Blacklist, "; ")
		}
		return s
	case step == upgrade.StepClose:
		var ns []string
		for n := range d.Nodes {
			ns = append(ns, n)
		}
		sort.Strings(ns)
		var parts []string
		for _, n := range ns {
			parts = append(parts, n+" "+transitions(d.Nodes[n]))
		}
		return fmt.Sprintf("history %s %s; node transitions: %s; MachineHealthChecks resumed: %s", d.History.Version, d.History.State,
			or(strings.Join(parts, ", "), "none seen by this run"), or(strings.Join(d.HealthChecks, ", "), "none"))
	}
	return cell(raw)
}

// transitions lists a node's transitions with their times, those seen only after a resume marked.
func transitions(ts []upgrade.Transition) string {
	var parts []string
	for _, t := range ts {
		s := fmt.Sprintf("%s at %s", t.Config, t.At.Format(time.RFC3339))
		if t.Late {
			s += " (changed while no run watched: first seen then, after a resume)"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

// upgradeMarkdown renders the section.
func upgradeMarkdown(b *strings.Builder, u *Upgrade) {
	if u == nil {
		return
	}
	b.WriteString("\n## Upgrade\n\nFrom `upgrade/journal.jsonl`, the upgrade's own journal: ")
	if u.Chain.Verified {
		fmt.Fprintf(b, "%d entries, hash chain **verified**, head `%s`.\n", u.Chain.Entries, u.Chain.Head)
	} else {
		fmt.Fprintf(b, "%d entries, **HASH CHAIN BROKEN**: %s\n", u.Chain.Entries, u.Chain.Error)
	}
	for _, h := range u.Hops {
		fmt.Fprintf(b, "\n### %s: %s\n\n| time | step | evidence |\n|---|---|---|\n", h.Hop, h.State)
		for _, s := range h.Steps {
			fmt.Fprintf(b, "| %s | %s | %s |\n", ts(s.Time), s.Step, pipes(s.Detail))
		}
	}
	if len(u.Trips) > 0 {
		b.WriteString("\n### Stops\n\n| time | hop | cause | remedy |\n|---|---|---|---|\n")
		for _, t := range u.Trips {
			fmt.Fprintf(b, "| %s | %s | %s | %s |\n", ts(t.Time), t.Hop, pipes(t.Error), pipes(t.Remedy))
		}
	}
}
