package bmc_test

import (
	"context"
	"sync"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/bmc"
	"github.com/bootstrap-dev/bootstrap/internal/bmc/bmctest"
)

// countingJournal counts Records by key.
type countingJournal struct {
	*memJournal
	mu sync.Mutex
	n  map[string]int
}

func (j *countingJournal) Record(key string, data any) error {
	j.mu.Lock()
	j.n[key]++
	j.mu.Unlock()
	return j.memJournal.Record(key, data)
}

// TestBootNodeResumeRecordsOnce: a run stopped between the media and boot-override steps and
// the power step (here the power action keeps failing) resumes by reading back, powers the node
// once, and journals each step once: the media and boot override found in place by read-back
// are not journaled again.
func TestBootNodeResumeRecordsOnce(t *testing.T) {
	iso := bmctest.NewISOServer()
	defer iso.Close()
	url := iso.URL() + "/agent.x86_64.iso"
	sim, target := simNode(t, "n1", bmctest.Options{})
	sim.Inject(bmctest.Fault{Op: "reset", Status: 503, Times: 4}) // every attempt of fast()
	j := &countingJournal{memJournal: newMemJournal(), n: map[string]int{}}
	if _, err := bmc.BootNode(context.Background(), target, url, j, fast()...); err == nil {
		t.Fatal("want the power step to fail")
	}
	if _, err := bmc.BootNode(context.Background(), target, url, j, fast()...); err != nil {
		t.Fatal(err)
	}
	if st := sim.Stats(); st.PowerActions != 1 || st.BootedFrom != url {
		t.Errorf("power actions %d, booted from %q; want 1, %q", st.PowerActions, st.BootedFrom, url)
	}
	for _, step := range []string{bmc.StepMedia, bmc.StepBootOverride, bmc.StepPowerIntent, bmc.StepPower, bmc.StepConfirm} {
		if n := j.n[bmc.StepKey("n1", step)]; n != 1 {
			t.Errorf("step %s journaled %d times, want once", step, n)
		}
	}
}
