package report

import (
	"encoding/json"
	"sort"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/upgrade"
)

// UpgradeBackup is one etcd backup of a hop, from its step's record: the HTML report lists each
// file with its SHA-256 in a table of its own.
type UpgradeBackup struct {
	When  string // "before" or "after" the hop
	Node  string
	Time  time.Time
	Files []upgrade.BackupFile
}

// UpgradeTransition is one node's move to a rendered config, as the hop's close step saw it.
type UpgradeTransition struct {
	Node, Config string
	At           time.Time
}

// Backups are the hop's etcd backups, in journal order.
func (h UpgradeHop) Backups() []UpgradeBackup {
	var out []UpgradeBackup
	for _, s := range h.Steps {
		if s.Step != upgrade.StepBackup && s.Step != upgrade.StepAfterBackup {
			continue
		}
		var b upgrade.Backup
		if json.Unmarshal(s.Data, &b) != nil || len(b.Files) == 0 {
			continue // skipped, or a record of another shape: its step row says what it holds
		}
		when := map[bool]string{true: "before", false: "after"}[s.Step == upgrade.StepBackup]
		at := b.At
		if at.IsZero() {
			at = s.Time
		}
		out = append(out, UpgradeBackup{When: when, Node: b.Node, Time: at, Files: b.Files})
	}
	return out
}

// Transitions are the per-node config transitions the hop's close steps journaled, by time, then
// node.
func (h UpgradeHop) Transitions() []UpgradeTransition {
	var out []UpgradeTransition
	for _, s := range h.Steps {
		if s.Step != upgrade.StepClose {
			continue
		}
		var d struct {
			Nodes map[string][]upgrade.Transition `json:"nodes"`
		}
		if json.Unmarshal(s.Data, &d) != nil {
			continue
		}
		for n, ts := range d.Nodes {
			for _, t := range ts {
				out = append(out, UpgradeTransition{Node: n, Config: t.Config, At: t.At})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].At.Equal(out[j].At) {
			return out[i].At.Before(out[j].At)
		}
		return out[i].Node < out[j].Node
	})
	return out
}

// hopClass is the CSS class of a hop's state: succeeded ok, stopped bad, running warn.
func hopClass(state string) string {
	switch state {
	case "succeeded":
		return "ok"
	case "stopped":
		return "bad"
	}
	return "warn"
}
