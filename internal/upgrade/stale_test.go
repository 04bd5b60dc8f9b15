package upgrade_test

import (
	"strings"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/upgrade"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade/upgradetest"
)

// A plan older than the cluster (the cluster updated since, off the plan's path) is refused with
// the remedy to plan again and the ISC lines of the target; the plan's start and any hop's
// version (a run resumed between hops) are accepted.
func TestPlanOlderThanTheCluster(t *testing.T) {
	c := load(t, upgradetest.Standard(t, true))
	p, err := upgrade.Compute(c, state(t, upgradetest.StateOptions{Version: "4.17.10"}), upgrade.Options{To: "4.18.30", Accept: map[string]string{"GPUOperatorRisk": "Jane"}})
	if err != nil {
		t.Fatal(err)
	}
	done := func(vs ...string) []upgrade.HistoryEntry {
		var h []upgrade.HistoryEntry
		for _, v := range vs {
			h = append(h, upgrade.HistoryEntry{State: "Completed", Version: v})
		}
		return h
	}
	for _, ok := range [][]upgrade.HistoryEntry{done("4.17.10"), done(p.Hops[0].To, "4.17.10"),
		append([]upgrade.HistoryEntry{{State: "Partial", Version: p.Hops[1].To}}, done(p.Hops[0].To, "4.17.10")...)} {
		if err := p.CheckCurrent(ok); err != nil {
			t.Errorf("%v: %v", ok, err)
		}
	}
	err = p.CheckCurrent(done("4.17.15", "4.17.10"))
	r := refusal(t, err, upgrade.ReasonStalePlan)
	if !strings.Contains(r.Error(), "the cluster is at 4.17.15 now") || !strings.Contains(r.Remedy(), "bootstrap upgrade plan --to 4.18.30") ||
		!strings.Contains(r.Remedy(), "      - name: stable-4.18\n        minVersion: 4.18.30\n        maxVersion: 4.18.30") {
		t.Errorf("%v\nremedy: %s", r, r.Remedy())
	}
	refusal(t, p.CheckCurrent([]upgrade.HistoryEntry{{State: "Partial", Version: "4.17.10"}}), upgrade.ReasonState)
}

// A plan that names blockers (upgrade plan exits 2 but still writes it) is refused by run with
// the blockers and the remedy to plan again; one without blockers passes.
func TestBlockedPlanIsRefused(t *testing.T) {
	p := upgrade.Plan{From: "4.19.2", To: "4.20.1", Hops: []upgrade.Hop{{From: "4.19.2", To: "4.20.1"}}}
	if err := p.CheckUnblocked(); err != nil {
		t.Fatalf("a plan without blockers: %v", err)
	}
	p.Blockers = []string{"hop-4.20.1: gpu-operator-certified 25.3.1: declares OpenShift 4.14-4.19, not 4.20"}
	r := refusal(t, p.CheckUnblocked(), upgrade.ReasonBlockedPlan)
	if !strings.Contains(r.Error(), "1 blocker(s): hop-4.20.1: gpu-operator-certified 25.3.1") || !strings.Contains(r.Remedy(), "bootstrap upgrade plan --to 4.20.1") {
		t.Errorf("%v\nremedy: %s", r, r.Remedy())
	}
}
