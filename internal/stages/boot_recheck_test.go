package stages

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/bmc/bmctest"
	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
)

// TestBootRerunChecksThePresent: after a finished boot (install not finished), one node is
// powered off at its button and another has its ISO ejected by someone else. The next run's
// Verify sees it, and the new attempt reads each node's BMC before carrying its earlier boot:
// the two are booted again — one power action each, the reason journaled — the third is left
// alone; a run after that changes nothing.
func TestBootRerunChecksThePresent(t *testing.T) {
	l := newCarryLab(t, "m0", "m1", "m2")
	if err := l.run(t, "first run"); err != nil {
		t.Fatal(err)
	}
	l.expect(t, "first run", "m0", "m1", "m2")
	l.sims["m1"].PullPlug()
	l.sims["m2"].EjectAll()
	if err := l.run(t, "rerun"); err != nil {
		t.Fatal(err)
	}
	for _, s := range l.sims {
		idleSim(t, s)
	}
	l.expect(t, "rerun", "m1", "m2")
	l.onceEach(t)
	entries, _, err := pipeline.ReadJournal(pipeline.JournalPath(l.r.WorkDir))
	if err != nil {
		t.Fatal(err)
	}
	reasons := map[string]string{}
	for _, e := range entries {
		if e.Kind == pipeline.EntryStepDone && strings.HasSuffix(e.Step, "/"+bootStepRecheck) {
			var rec struct{ Reason string }
			_ = json.Unmarshal(e.Data, &rec)
			reasons[strings.TrimSuffix(strings.TrimPrefix(e.Step, "node:"), "/"+bootStepRecheck)] = rec.Reason
		}
	}
	if len(reasons) != 2 || !strings.Contains(reasons["m1"], "power is Off") || !strings.Contains(reasons["m2"], "Inserted=false") {
		t.Errorf("recheck reasons %q; want m1 (power off) and m2 (media gone)", reasons)
	}
	if err := l.run(t, "third run"); err != nil {
		t.Fatal(err)
	}
	l.expect(t, "third run")
}

// idleSim waits until every power action sim accepted has reached its boot.
func idleSim(t *testing.T, sim *bmctest.BMC) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := sim.Idle(ctx); err != nil {
		t.Fatal(err)
	}
}
