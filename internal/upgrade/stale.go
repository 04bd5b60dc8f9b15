package upgrade

import (
	"fmt"
	"strings"
)

// ReasonStalePlan: the plan was made for a version the cluster is no longer at (nor at any of
// its hops' versions): it was updated since, by hand or by another plan.
const ReasonStalePlan Reason = "stale-plan"

// CheckCurrent refuses a plan the cluster has left: the cluster's newest Completed version (from
// its ClusterVersion history, newest first) must be the plan's From or a hop's To (a run resumed
// between hops). A plan older than the cluster would send it back, or over a path planned from
// another version; the remedy plans again and names the ImageSetConfiguration lines of the target.
func (p *Plan) CheckCurrent(history []HistoryEntry) error {
	current := ""
	for _, h := range history {
		if h.State == "Completed" {
			current = h.Version
			break
		}
	}
	if current == "" {
		return refuse(ReasonState, "ClusterVersion", "wait for the cluster's update to complete, then plan again", "no Completed version in the ClusterVersion history")
	}
	versions := []string{p.From}
	for _, h := range p.Hops {
		versions = append(versions, h.To)
	}
	for _, v := range versions {
		if v == current {
			return nil
		}
	}
	fix := fmt.Sprintf("plan again from the cluster's version: bootstrap upgrade plan --to %s -o json > plan.json; a release it then needs and the carry lacks comes with --isc, or with these ImageSetConfiguration lines:\n%s",
		p.To, iscLines(minorOfString(p.To), p.To, p.To))
	return refuse(ReasonStalePlan, "", fix, "the plan goes %s; the cluster is at %s now, not on it (its history: %s)",
		strings.Join(versions, " -> "), current, historyLine(history))
}

func historyLine(h []HistoryEntry) string {
	var out []string
	for _, e := range h {
		out = append(out, e.Version+" "+e.State)
	}
	return strings.Join(out, ", ")
}

// ReasonBlockedPlan: the plan holds blockers (upgrade plan exited 2 when it wrote it).
const ReasonBlockedPlan Reason = "blocked-plan"

// CheckUnblocked refuses to run a plan that names blockers: `upgrade plan` writes the plan even
// then (it exits 2), so that it can be read and the blockers fixed, but no hop of it may start.
func (p *Plan) CheckUnblocked() error {
	if len(p.Blockers) == 0 {
		return nil
	}
	return refuse(ReasonBlockedPlan, "", "resolve each blocker (its source is in the plan's table), then plan again: bootstrap upgrade plan --to "+p.To+" -o json > plan.json",
		"the plan has %d blocker(s): %s", len(p.Blockers), strings.Join(p.Blockers, "; "))
}
