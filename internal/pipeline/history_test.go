package pipeline_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
)

// TestHistoryFailResumeNewAttempt: a failed attempt, its resume, a skip and a fresh attempt are
// all in the history, each execution with its run, result and the steps it journaled.
func TestHistoryFailResumeNewAttempt(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	f.b.fail, f.b.failAt = remedied{"disk full", "free space"}, "s3"
	if err := f.r.Run(ctx, pipeline.RunOptions{}); err == nil {
		t.Fatal("want the first run to fail")
	}
	f.b.fail = nil
	if err := f.r.Run(ctx, pipeline.RunOptions{}); err != nil { // resumes attempt 1
		t.Fatal(err)
	}
	if err := f.r.Run(ctx, pipeline.RunOptions{}); err != nil { // skips everything
		t.Fatal(err)
	}
	f.b.input = "2"
	if err := f.r.Run(ctx, pipeline.RunOptions{}); err != nil { // attempt 2 of b, c stale then re-run
		t.Fatal(err)
	}
	h := pipeline.BuildHistory(mustRead(t, pipeline.JournalPath(f.r.WorkDir)))

	wantRuns := []pipeline.RunResult{pipeline.RunFailed, pipeline.RunSucceeded, pipeline.RunSucceeded, pipeline.RunSucceeded}
	if len(h.Runs) != len(wantRuns) {
		t.Fatalf("%d runs, want %d: %+v", len(h.Runs), len(wantRuns), h.Runs)
	}
	for i, w := range wantRuns {
		if h.Runs[i].Result != w || h.Runs[i].Finished.IsZero() {
			t.Errorf("run %d: %s finished %v, want %s", i+1, h.Runs[i].Result, h.Runs[i].Finished, w)
		}
	}
	if r := h.Runs[0]; r.Error == "" || len(r.Ran) != 2 || r.Ran[1] != "b" {
		t.Errorf("failed run: error %q ran %v; want the error and [a b]", r.Error, r.Ran)
	}
	if r := h.Runs[2]; len(r.Ran) != 0 || len(r.Skipped) != 3 {
		t.Errorf("third run ran %v skipped %v; want nothing run, a b c skipped", r.Ran, r.Skipped)
	}

	b1 := h.Attempt("b", 1)
	if b1 == nil || len(b1.Executions) != 2 {
		t.Fatalf("b attempt 1: %+v; want two executions", b1)
	}
	if x := b1.Executions[0]; x.State != pipeline.StateFailed || x.Error != "disk full" || x.Remedy != "free space" ||
		x.Steps != 2 || x.Run != h.Runs[0].Seq {
		t.Errorf("b attempt 1, first execution: %+v; want failed in run 1 with disk full after 2 steps", x)
	}
	if x := b1.Executions[1]; x.State != pipeline.StateSucceeded || x.Steps != 1 || x.Run != h.Runs[1].Seq {
		t.Errorf("b attempt 1, resume: %+v; want succeeded in run 2 after 1 step", x)
	}
	if b1.State != pipeline.StateSucceeded || b1.Latest || len(b1.Steps) != 3 || len(b1.Output) == 0 {
		t.Errorf("b attempt 1: state %s latest %v steps %d output %s", b1.State, b1.Latest, len(b1.Steps), b1.Output)
	}
	if b1.Seconds < b1.Executions[0].Seconds || b1.Seconds < b1.Executions[1].Seconds {
		t.Errorf("b attempt 1: %v s, less than one of its executions", b1.Seconds)
	}
	b2 := h.Attempt("b", 2)
	if b2 == nil || !b2.Latest || b2.State != pipeline.StateSucceeded || len(b2.Steps) != 3 || len(b2.Executions) != 1 {
		t.Fatalf("b attempt 2: %+v", b2)
	}
	for _, s := range b2.Steps {
		if s.Run != h.Runs[3].Seq {
			t.Errorf("b attempt 2 step %s attributed to run %d, want %d", s.Key, s.Run, h.Runs[3].Seq)
		}
	}
	if c1 := h.Attempt("c", 1); c1 == nil || c1.Stale == "" || c1.Latest {
		t.Errorf("c attempt 1: %+v; want marked stale, not the latest", c1)
	}
	if c2 := h.Attempt("c", 2); c2 == nil || !c2.Latest || c2.State != pipeline.StateSucceeded {
		t.Errorf("c attempt 2: %+v", c2)
	}
}

// TestHistoryKilled: a run killed with SIGKILL mid-stage is a killed run and an interrupted
// execution (ended at its last journaled entry); the resume is a second execution of the same
// attempt; every step is attributed to the run that journaled it.
func TestHistoryKilled(t *testing.T) {
	dir := t.TempDir()
	journal := filepath.Join(dir, "work", pipeline.JournalFile)
	cmd := childCmd(t, "crash", dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.Now().Add(time.Minute)
	for len(doneSteps(t, journal)) < 50 {
		if time.Now().After(deadline) {
			t.Fatal("the child journaled no 50 steps in a minute")
		}
		select {
		case err := <-exited:
			t.Fatalf("the child ended before it was killed: %v", err)
		case <-time.After(5 * time.Millisecond):
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-exited

	// Before the next run, the journal ends in an open run: running until MarkKilled.
	h := pipeline.BuildHistory(mustRead(t, journal))
	if len(h.Runs) != 1 || h.Runs[0].Result != pipeline.RunRunning {
		t.Fatalf("runs before resume: %+v", h.Runs)
	}
	h.MarkKilled()
	if h.Runs[0].Result != pipeline.RunKilled || h.Attempt("work", 1).State != pipeline.StateInterrupted {
		t.Fatalf("after MarkKilled: run %s, work %s", h.Runs[0].Result, h.Attempt("work", 1).State)
	}

	if err := childCmd(t, "crash", dir).Run(); err != nil {
		t.Fatal(err)
	}
	h = pipeline.BuildHistory(mustRead(t, journal))
	if len(h.Runs) != 2 || h.Runs[0].Result != pipeline.RunKilled || h.Runs[1].Result != pipeline.RunSucceeded {
		t.Fatalf("runs: %+v", h.Runs)
	}
	if h.Runs[0].Finished.Before(h.Runs[0].Started) || !h.Runs[0].Finished.Before(h.Runs[1].Started) {
		t.Errorf("killed run: started %v finished %v, next run started %v", h.Runs[0].Started, h.Runs[0].Finished, h.Runs[1].Started)
	}
	w := h.Attempt("work", 1)
	if w == nil || len(w.Executions) != 2 || !w.Latest || w.State != pipeline.StateSucceeded {
		t.Fatalf("work attempt 1: %+v", w)
	}
	killed, resumed := w.Executions[0], w.Executions[1]
	if killed.State != pipeline.StateInterrupted || killed.Error == "" || killed.Run != h.Runs[0].Seq || killed.Finished.IsZero() {
		t.Errorf("killed execution: %+v", killed)
	}
	if resumed.State != pipeline.StateSucceeded || resumed.Run != h.Runs[1].Seq {
		t.Errorf("resumed execution: %+v", resumed)
	}
	if killed.Steps < 50 || killed.Steps+resumed.Steps != crashSteps || len(w.Steps) != crashSteps {
		t.Errorf("steps: %d killed + %d resumed, %d recorded; want %d in all", killed.Steps, resumed.Steps, len(w.Steps), crashSteps)
	}
	byRun := map[int64]int{}
	for _, s := range w.Steps {
		byRun[s.Run]++
	}
	if byRun[h.Runs[0].Seq] != killed.Steps || byRun[h.Runs[1].Seq] != resumed.Steps {
		t.Errorf("steps by run %v; executions say %d and %d", byRun, killed.Steps, resumed.Steps)
	}
	if prep := h.Attempt("prep", 1); prep == nil || len(prep.Executions) != 1 {
		t.Errorf("prep: %+v; want one execution (skipped by the resume)", prep)
	}
	if len(h.Runs[1].Skipped) != 1 || h.Runs[1].Skipped[0] != "prep" {
		t.Errorf("resume skipped %v, want [prep]", h.Runs[1].Skipped)
	}
}
