package report

import (
	"fmt"
	"strings"
)

// NodeGroup is the nodes of one role in one state: "worker, install succeeded, powered, media
// inserted (120 nodes)". Healthy groups are shown collapsed.
type NodeGroup struct {
	State   string
	Role    string
	Healthy bool
	Nodes   []NodeSummary
}

// Title is the group's one line: its state, role, count and node names (first and last of many).
func (g NodeGroup) Title() string {
	names := make([]string, 0, 3)
	switch n := len(g.Nodes); {
	case n <= 3:
		for _, ns := range g.Nodes {
			names = append(names, ns.Name)
		}
	default:
		names = append(names, g.Nodes[0].Name, "…", g.Nodes[n-1].Name)
	}
	role := ""
	if g.Role != "" {
		role = g.Role + ", "
	}
	return fmt.Sprintf("%s%s: %d node(s): %s", role, g.State, len(g.Nodes), strings.Join(names, " "))
}

// nodeState names what the journal says of a node: its install state, whether it was powered,
// whether its last virtual-media action failed.
func nodeState(ns NodeSummary) (state string, healthy bool) {
	var parts []string
	install := ns.Install
	if install == "" {
		install = "pending"
	}
	parts = append(parts, "install "+install)
	mediaFailed := strings.Contains(strings.ToLower(ns.Media), "fail") || strings.Contains(strings.ToLower(ns.Media), "error")
	switch {
	case ns.PowerActions == 0:
		parts = append(parts, "never powered by bootstrap")
	default:
		parts = append(parts, "powered")
	}
	if mediaFailed {
		parts = append(parts, "last media action failed")
	}
	return strings.Join(parts, ", "), install == "succeeded" && ns.PowerActions > 0 && !mediaFailed
}

// nodeGroups groups nodes by role and state, in the order each group first appears; the
// unhealthy groups first, as they are what a reader looks for.
func nodeGroups(nodes []NodeSummary) []NodeGroup {
	var groups []NodeGroup
	index := map[string]int{}
	for _, ns := range nodes {
		state, healthy := nodeState(ns)
		key := ns.Role + "\x00" + state
		i, ok := index[key]
		if !ok {
			i = len(groups)
			index[key] = i
			groups = append(groups, NodeGroup{State: state, Role: ns.Role, Healthy: healthy})
		}
		groups[i].Nodes = append(groups[i].Nodes, ns)
	}
	out := make([]NodeGroup, 0, len(groups))
	for _, healthy := range []bool{false, true} {
		for _, g := range groups {
			if g.Healthy == healthy {
				out = append(out, g)
			}
		}
	}
	return out
}
