//go:build e2e

package e2e

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
)

// killSeeds is how many random kill moments each stage gets.
const killSeeds = 3

// SIGKILL the run at a random moment inside a stage, then resume to the end: nothing journaled
// as done is done again, no node is power-cycled twice, the registry holds exactly the planned
// digests.
func TestKillAndResume(t *testing.T) {
	for _, stage := range []string{"mirror", "iso", "boot"} {
		for seed := uint64(1); seed <= killSeeds; seed++ {
			t.Run(fmt.Sprintf("%s/seed%d", stage, seed), func(t *testing.T) {
				killResume(t, stage, seed)
			})
		}
	}
}

func killResume(t *testing.T, stage string, seed uint64) {
	l := startLab(t)
	rng := rand.New(rand.NewPCG(seed, uint64(len(stage))))
	// Kill within the time the stage takes in the lab: mirror about 5 s, iso 0.3 s, boot 2.5 s
	// (BootDelay is 1 s).
	window := map[string]time.Duration{"mirror": 3 * time.Second, "iso": 300 * time.Millisecond, "boot": 1500 * time.Millisecond}[stage]
	delay := time.Duration(rng.Int64N(int64(window)))
	cmd := l.command("run")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	started := waitFor(t, 2*time.Minute, func() bool {
		return len(entries(l.journalQuiet(), pipeline.EntryStageStarted, stage)) > 0
	})
	if !started {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("stage %s never started:\n%s", stage, tail(out.String(), 30))
	}
	time.Sleep(delay)
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	before := l.journalQuiet()
	doneBefore := stepKeys(before)
	finished := len(entries(before, pipeline.EntryStageSucceeded, stage)) > 0
	t.Logf("killed %s after %s: %d steps journaled, stage finished before the kill: %v", stage, delay, len(doneBefore), finished)

	r := l.mustRun(t, 0, "run")
	after := l.journal(t)
	// Nothing journaled as done is recorded again by the resumed run.
	seen := map[string][]pipeline.Entry{}
	for _, e := range entries(after, pipeline.EntryStepDone, "") {
		if e.Stage == "preflight" {
			continue // read-only, runs on every pass
		}
		seen[e.Stage+" "+e.Step] = append(seen[e.Stage+" "+e.Step], e)
	}
	for k, es := range seen {
		if len(es) > 1 {
			var desc []string
			for _, e := range es {
				desc = append(desc, fmt.Sprintf("seq %d run %d attempt %d data %.200s", e.Seq, e.Run, e.Attempt, e.Data))
			}
			t.Errorf("step %q journaled %d times: %s", k, len(es), strings.Join(desc, "; "))
		}
	}
	for n, p := range l.powerActions() {
		if p != 1 {
			t.Errorf("node %s: %d power actions, want exactly 1", n, p)
		}
	}
	if got, want := l.storedManifests(t), l.content(t).plannedManifests(); !reflect.DeepEqual(got, want) {
		t.Errorf("registry holds %d manifests, content.json plans %d:\n got %v\nwant %v", len(got), len(want), got, want)
	}
	for _, st := range []string{"mirror", "iso", "boot"} {
		if len(entries(after, pipeline.EntryStageSucceeded, st)) == 0 {
			t.Errorf("stage %s never succeeded:\n%s", st, tail(r.out, 30))
		}
	}
}

func stepKeys(j []pipeline.Entry) map[string]bool {
	m := map[string]bool{}
	for _, e := range entries(j, pipeline.EntryStepDone, "") {
		m[e.Stage+" "+e.Step] = true
	}
	return m
}

func waitFor(t *testing.T, d time.Duration, ok func() bool) bool {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if ok() {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}
