package install

import (
	"fmt"
	"sort"
	"strings"
	"sync"
)

// The phases of an agent-based install as a person follows them, in order. They come from the
// assisted service's cluster status (what the rendezvous host's API reports: insufficient/ready →
// preparing-for-installation → installing → finalizing → installed) and from the installer's two
// waits (bootstrap-complete, install-complete), whichever says it first; bootstrap ends with the
// control plane running on the installed nodes, after which the cluster finalizes, and bootstrap
// checks the cluster's own API at the end.
var Phases = []string{
	"waiting for hosts",  // hosts registering, validations running
	"preparing",          // cluster status preparing-for-installation
	"installing",         // writing images to disk, rebooting
	"finalizing",         // bootstrap complete; cluster operators rolling out
	"checking cluster",   // install-complete; ClusterVersion, operators and nodes checked
	"cluster is healthy", // all checks passed
}

// phaseOfStatus maps a cluster status of the assisted service to a phase index (0-based); ok is
// false for statuses that say nothing about progress (errors, api-unreachable).
func phaseOfStatus(status string) (int, bool) {
	switch status {
	case "insufficient", "ready", "pending-for-input", "adding-hosts":
		return 0, true
	case "preparing-for-installation":
		return 1, true
	case "installing", "installing-pending-user-action":
		return 2, true
	case "finalizing":
		return 3, true
	case "installed":
		return 4, true
	}
	return 0, false
}

// Tracker folds the install's findings and milestones into where the install is: its phase and
// each node's state. Phases only move forward. Safe for concurrent use.
type Tracker struct {
	mu    sync.Mutex
	phase int
	state map[string]string // node → latest install stage ("Writing image to disk") or status
	nodes []string
}

// NewTracker tracks the named nodes (the profile's).
func NewTracker(nodes []string) *Tracker {
	t := &Tracker{state: map[string]string{}, nodes: append([]string(nil), nodes...)}
	sort.Strings(t.nodes)
	return t
}

// Finding takes one finding of the follower; it reports whether the snapshot changed.
func (t *Tracker) Finding(f Finding) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch f.Kind {
	case ClusterStatus:
		if p, ok := phaseOfStatus(f.Status); ok {
			return t.advance(p)
		}
	case HostStage:
		return t.set(f.Host, f.Status)
	case HostStatus:
		// A status says less than a stage; it shows until the first stage arrives, and
		// "installed" is final whatever stage was last seen.
		if f.Status == "installed" {
			return t.set(f.Host, "Done") // as the install stage says it: one word for done
		}
		if cur, ok := t.state[f.Host]; !ok || isStatus(cur) {
			return t.set(f.Host, f.Status)
		}
	}
	return false
}

// isStatus tells a host status ("known", "installing-in-progress") from an install stage ("Writing
// image to disk"): statuses are lower-case words joined by dashes.
func isStatus(s string) bool { return s == strings.ToLower(s) && !strings.Contains(s, " ") }

func (t *Tracker) set(host, state string) bool {
	if host == "" || t.state[host] == state {
		return false
	}
	t.state[host] = state
	return true
}

func (t *Tracker) advance(p int) bool {
	if p <= t.phase {
		return false
	}
	t.phase = p
	return true
}

// Reached marks a milestone of the installer: a wait-for target done (BootstrapComplete,
// InstallComplete) or the cluster checks passed ("", which also marks every node done: each was
// found Ready); it reports whether the snapshot changed.
func (t *Tracker) Reached(target string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch target {
	case BootstrapComplete:
		return t.advance(3)
	case InstallComplete:
		return t.advance(4)
	case "":
		// The cluster checks found every named node Ready: their installs are done, whether or
		// not the rendezvous API (gone with the bootstrap host) said so before it stopped.
		changed := false
		for _, n := range t.nodes {
			changed = t.set(n, "Done") || changed
		}
		return t.advance(5) || changed
	}
	return false
}

// Snapshot is where the install is.
type Snapshot struct {
	Phase     int    // 1-based index into Phases
	Phases    int    // len(Phases)
	Name      string // Phases[Phase-1]
	NodesDone int    // nodes whose install is done (stage Done, or status installed)
	Nodes     int
	// States summarizes the nodes by state, most advanced first: "2 Done · 1 Rebooting (gpu-1)
	// · 2 Writing image to disk (gpu-2, gpu-3)"; nodes not heard of yet are "waiting".
	States string
}

// Snapshot returns where the install is now.
func (t *Tracker) Snapshot() Snapshot {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := Snapshot{Phase: t.phase + 1, Phases: len(Phases), Name: Phases[t.phase], Nodes: len(t.nodes)}
	byState := map[string][]string{}
	var order []string
	for _, n := range t.nodes {
		st := t.state[n]
		if st == "" {
			st = "waiting"
		}
		if st == "Done" {
			s.NodesDone++
		}
		if byState[st] == nil {
			order = append(order, st)
		}
		byState[st] = append(byState[st], n)
	}
	sort.SliceStable(order, func(a, b int) bool { return stageRank(order[a]) > stageRank(order[b]) })
	parts := make([]string, 0, len(order))
	for _, st := range order {
		names := byState[st]
		p := fmt.Sprintf("%d %s", len(names), st)
		if st != "Done" {
			shown := names
			if len(shown) > 3 {
				shown = append(shown[:3:3], "…")
			}
			p += " (" + strings.Join(shown, ", ") + ")"
		}
		parts = append(parts, p)
	}
	s.States = strings.Join(parts, " · ")
	return s
}

// stageRank orders node states from the least to the most advanced, as the assisted service's
// install stages go; unknown states sit in the middle, in the order first seen.
func stageRank(s string) int {
	for i, known := range []string{
		"waiting", "discovering", "known", "insufficient", "preparing-for-installation", "preparing-successful",
		"installing", "Starting installation", "Waiting for control plane", "Waiting for bootkube",
		"Installing", "Writing image to disk", "Waiting for controller", "Rebooting",
		"Waiting for ignition", "Configuring", "Joined", "installing-in-progress", "installed", "Done",
	} {
		if s == known {
			return i
		}
	}
	return 10
}
