//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
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
//
// The kills in mirror, iso and boot resume up to boot (--until boot): every resume through the
// whole pipeline costs the ~20 s start of the lab's kube-apiserver. One kill lands in install,
// the longest stage on a real site, and its resume runs through configure and handoff.
func TestKillAndResume(t *testing.T) {
	for _, stage := range []string{"mirror", "iso", "boot", "install"} {
		seeds := uint64(killSeeds)
		if stage == "install" {
			seeds = 1
		}
		for seed := uint64(1); seed <= seeds; seed++ {
			t.Run(fmt.Sprintf("%s/seed%d", stage, seed), func(t *testing.T) {
				killResume(t, stage, seed)
			})
		}
	}
}

// throughHandoff are the stages whose kill tests run the whole pipeline.
var throughHandoff = map[string]bool{"install": true}

func killResume(t *testing.T, stage string, seed uint64) {
	l := startLab(t)
	if throughHandoff[stage] {
		l.until = ""
	}
	rng := rand.New(rand.NewPCG(seed, uint64(len(stage))))
	// Kill within the time the stage takes in the lab: mirror about 5 s, iso 0.3 s, boot 2.5 s
	// (BootDelay is 1 s), install about 12 s (the player's install progress).
	window := map[string]time.Duration{"mirror": 3 * time.Second, "iso": 300 * time.Millisecond, "boot": 1500 * time.Millisecond,
		"install": 10 * time.Second}[stage]
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

	resumed := time.Now()
	r := l.run(t, "run")
	if r.code != 0 {
		t.Fatalf("bootstrap run: exit %d, want 0\n%s", r.code, tail(r.out, 60))
	}
	after := l.journal(t)
	if stage == "install" {
		liveReadsResumed(t, l, after, resumed)
	}
	// Nothing journaled as done is recorded again by the resumed run, except a node powered
	// again because it never read its ISO after the killed run's power action (the ISO server
	// died with that run): its new power intent and power steps say so.
	seen := map[string][]pipeline.Entry{}
	again := map[string]bool{}
	for _, e := range entries(after, pipeline.EntryStepDone, "") {
		if e.Stage == "preflight" || actionRecord(e) {
			continue // read-only, runs on every pass; or a record of one action, not a finished step
		}
		if e.Stage == "boot" && strings.Contains(string(e.Data), "did not read its ISO") {
			again[pipeline.StepRecord{Key: e.Step}.Node()] = true
			continue
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
		if want := map[bool]int{false: 1, true: 2}[again[n]]; p != want {
			t.Errorf("node %s: %d power actions, want exactly %d (powered again for want of an ISO read: %t)", n, p, want, again[n])
		}
		if from := l.bmcs.Sims[n].Stats().BootedFrom; !strings.Contains(from, "/") {
			t.Errorf("node %s booted from %q, not its ISO", n, from)
		}
	}
	if len(again) > 0 {
		t.Logf("powered again, having not read their ISO after the killed run's power action: %v", again)
	}
	if got, want := l.storedManifests(t), l.content(t).plannedManifests(); !reflect.DeepEqual(got, want) {
		t.Errorf("registry holds %d manifests, content.json plans %d:\n got %v\nwant %v", len(got), len(want), got, want)
	}
	stages := []string{"mirror", "iso", "boot"}
	if l.until == "" {
		stages = append(stages, "install", "configure", "handoff")
	}
	for _, st := range stages {
		if len(entries(after, pipeline.EntryStageSucceeded, st)) == 0 {
			t.Errorf("stage %s never succeeded:\n%s", st, tail(r.out, 30))
		}
	}
	killedInReport(t, l, stage, finished)
}

// killedInReport checks the evidence report tells the kill: the first run killed, and (unless
// the stage had finished) its attempt with an interrupted execution resumed to success.
func killedInReport(t *testing.T, l *testLab, stage string, finished bool) {
	t.Helper()
	out := l.mustRun(t, 0, "report", "--format", "json").out
	var rep struct {
		History pipeline.History `json:"history"`
	}
	if err := json.Unmarshal(resultData(t, out), &rep); err != nil {
		t.Fatalf("report json: %v", err)
	}
	h := rep.History
	if len(h.Runs) != 2 || h.Runs[0].Result != pipeline.RunKilled || h.Runs[1].Result != pipeline.RunSucceeded {
		t.Errorf("report runs: %+v; want the killed run, then the resume", h.Runs)
		return
	}
	if finished {
		return
	}
	a := h.Attempt(stage, 1)
	if a == nil || len(a.Executions) != 2 || a.Executions[0].State != pipeline.StateInterrupted ||
		a.Executions[0].Run != h.Runs[0].Seq || a.Executions[1].State != pipeline.StateSucceeded || a.Executions[1].Run != h.Runs[1].Seq {
		t.Errorf("report: %s attempt 1: %+v; want interrupted in the killed run, then succeeded in the resume", stage, a)
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

// liveReadsResumed checks that the resumed run serves the nodes' live ISO although boot is
// skipped as done: the install stage starts the ISO server first thing, so from a moment after
// that stage started no read fails, and every node whose live system still ran a read interval
// later read its ISO successfully. A node whose live system ended before (its ISO ejected by the
// handover of an install the lab finished during the kill) has nothing left to read.
func liveReadsResumed(t *testing.T, l *testLab, after []pipeline.Entry, resumed time.Time) {
	t.Helper()
	var start time.Time
	for _, e := range entries(after, pipeline.EntryStageStarted, "install") {
		if e.Time.After(resumed) {
			start = e.Time
			break
		}
	}
	if start.IsZero() {
		t.Errorf("the resumed run never started install")
		return
	}
	every := l.bmcs.LiveReads
	serving := start.Add(every) // the server starts within the stage's first moments
	for n, s := range l.bmcs.Sims {
		st := s.Stats()
		desc := fmt.Sprintf("install resumed %s; last read %s, last failed read %s, live system ended %s; %d reads, %d failed",
			start.Format(time.StampMilli), st.LastLiveRead.Format(time.StampMilli), st.LastLiveReadError.Format(time.StampMilli),
			st.LiveEnded.Format(time.StampMilli), st.LiveReads, st.LiveReadErrors)
		switch {
		case st.LastLiveReadError.After(serving):
			t.Errorf("node %s: a read of its ISO failed while the resumed run served it (%s)", n, desc)
		case st.LastLiveRead.After(resumed):
		case !st.LiveEnded.IsZero() && st.LiveEnded.Before(serving.Add(every)):
			t.Logf("node %s: its live system ended before a read of the resumed run's ISO server was due (%s)", n, desc)
		default:
			t.Errorf("node %s: no successful read of its ISO during the resumed run (%s)", n, desc)
		}
	}
}
