package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
	"github.com/bootstrap-dev/bootstrap/internal/redact"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// scripted is a stage whose inputs, output, verify result and failure a test changes between
// runs; it records what it executed.
type scripted struct {
	name   string
	input  string
	output string
	verify error
	fail   error
	steps  []string // step keys it records, in order
	failAt string   // fail (with fail) just before this step
	hook   func(*pipeline.Env)
	nodes  bool // node-scoped: replay --node applies

	mu       sync.Mutex
	runs     int
	executed []string
	env      *pipeline.Env
}

func (s *scripted) Name() string                                { return s.name }
func (s *scripted) Summary() string                             { return "scripted " + s.name }
func (s *scripted) NodeScoped() bool                            { return s.nodes }
func (s *scripted) Inputs(*pipeline.Env) (any, error)           { return map[string]string{"in": s.input}, nil }
func (s *scripted) Verify(context.Context, *pipeline.Env) error { return s.verify }
func (s *scripted) Run(ctx context.Context, env *pipeline.Env) (any, error) {
	s.mu.Lock()
	s.runs++
	s.env = env
	s.mu.Unlock()
	if s.hook != nil {
		s.hook(env)
	}
	for _, k := range s.steps {
		if k == s.failAt && s.fail != nil {
			return nil, s.fail
		}
		if env.Steps.Done(k, nil) {
			continue
		}
		s.mu.Lock()
		s.executed = append(s.executed, k)
		s.mu.Unlock()
		if err := env.Steps.Record(k, map[string]string{"k": k}); err != nil {
			return nil, err
		}
	}
	if s.failAt == "" && s.fail != nil {
		return nil, s.fail
	}
	return map[string]string{"out": s.output}, nil
}

func (s *scripted) reset() { s.runs, s.executed = 0, nil }

type remedied struct{ msg, remedy string }

func (e remedied) Error() string  { return e.msg }
func (e remedied) Remedy() string { return e.remedy }

type fixture struct {
	a, b, c *scripted
	r       *pipeline.Runner
	events  []pipeline.Event
	mu      sync.Mutex
}

func newFixture(t *testing.T) *fixture {
	f := &fixture{
		a: &scripted{name: "a", input: "1", output: "A1"},
		b: &scripted{name: "b", input: "1", output: "B1", steps: []string{"s1", "s2", "s3"}, nodes: true},
		c: &scripted{name: "c", input: "1", output: "C1"},
	}
	f.r = &pipeline.Runner{WorkDir: t.TempDir(), Command: "test", Stages: []pipeline.Stage{f.a, f.b, f.c},
		Site: &site.Site{Nodes: []site.Node{{Name: "w1"}, {Name: "w2"}}},
		Sink: func(e pipeline.Event) { f.mu.Lock(); f.events = append(f.events, e); f.mu.Unlock() }}
	return f
}

func (f *fixture) runs() [3]int { return [3]int{f.a.runs, f.b.runs, f.c.runs} }
func (f *fixture) reset()       { f.a.reset(); f.b.reset(); f.c.reset(); f.events = nil }

func (f *fixture) status(t *testing.T) pipeline.Status {
	t.Helper()
	st, err := f.r.Status()
	if err != nil {
		t.Fatal(err)
	}
	if st.Chain != "" {
		t.Fatalf("chain: %s", st.Chain)
	}
	return st
}

// TestResumeRule walks the resume rule through one work dir, step by step.
func TestResumeRule(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	steps := []struct {
		name     string
		change   func()
		opts     pipeline.RunOptions
		wantRuns [3]int
		wantExec []string // steps b executed
		wantErr  string
		wantB    pipeline.StageState
		wantC    pipeline.StageState
	}{
		{name: "first run runs all", wantRuns: [3]int{1, 1, 1}, wantExec: []string{"s1", "s2", "s3"},
			wantB: pipeline.StateSucceeded, wantC: pipeline.StateSucceeded},
		{name: "second run skips all", wantRuns: [3]int{0, 0, 0},
			wantB: pipeline.StateSucceeded, wantC: pipeline.StateSucceeded},
		{name: "verify fails, same output: only b runs, fresh attempt", change: func() { f.b.verify = errors.New("media gone") },
			wantRuns: [3]int{0, 1, 0}, wantExec: []string{"s1", "s2", "s3"},
			wantB: pipeline.StateSucceeded, wantC: pipeline.StateSucceeded},
		{name: "verify fails, output changes: c is stale and runs", change: func() { f.b.output = "B2" },
			wantRuns: [3]int{0, 1, 1}, wantExec: []string{"s1", "s2", "s3"},
			wantB: pipeline.StateSucceeded, wantC: pipeline.StateSucceeded},
		{name: "b fails at s3 after new inputs: c stale", change: func() {
			f.b.verify, f.b.input, f.b.fail, f.b.failAt = nil, "2", remedied{"disk full", "free space"}, "s3"
		}, wantRuns: [3]int{0, 1, 0}, wantExec: []string{"s1", "s2"}, wantErr: "disk full",
			wantB: pipeline.StateFailed, wantC: pipeline.StateStale},
		{name: "resume after failure skips journaled steps", change: func() { f.b.fail = nil },
			wantRuns: [3]int{0, 1, 1}, wantExec: []string{"s3"},
			wantB: pipeline.StateSucceeded, wantC: pipeline.StateSucceeded},
		{name: "failed with old inputs, retried with new: steps run again", change: func() {
			f.b.input, f.b.fail, f.b.failAt = "3", errors.New("boom"), "s2"
		}, wantRuns: [3]int{0, 1, 0}, wantExec: []string{"s1"}, wantErr: "boom",
			wantB: pipeline.StateFailed, wantC: pipeline.StateStale},
		{name: "fingerprint change invalidates steps of the failed attempt", change: func() { f.b.input, f.b.fail = "4", nil },
			wantRuns: [3]int{0, 1, 1}, wantExec: []string{"s1", "s2", "s3"},
			wantB: pipeline.StateSucceeded, wantC: pipeline.StateSucceeded},
		{name: "until b leaves c alone", change: func() { f.b.input = "5" }, opts: pipeline.RunOptions{Until: "b"},
			wantRuns: [3]int{0, 1, 0}, wantExec: []string{"s1", "s2", "s3"},
			wantB: pipeline.StateSucceeded, wantC: pipeline.StateStale},
		{name: "from c runs only the stale c", opts: pipeline.RunOptions{From: "c"},
			wantRuns: [3]int{0, 0, 1}, wantB: pipeline.StateSucceeded, wantC: pipeline.StateSucceeded},
	}
	for _, st := range steps {
		f.reset()
		if st.change != nil {
			st.change()
		}
		err := f.r.Run(ctx, st.opts)
		if st.wantErr == "" && err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if st.wantErr != "" {
			var se *pipeline.StageError
			if !errors.As(err, &se) || se.Stage != "b" || !strings.Contains(err.Error(), st.wantErr) {
				t.Fatalf("%s: got %v, want *StageError of b with %q", st.name, err, st.wantErr)
			}
		}
		if f.runs() != st.wantRuns {
			t.Errorf("%s: runs %v, want %v", st.name, f.runs(), st.wantRuns)
		}
		if !slices.Equal(f.b.executed, st.wantExec) {
			t.Errorf("%s: b executed %v, want %v", st.name, f.b.executed, st.wantExec)
		}
		status := f.status(t)
		if got := status.Stage("b").State; got != st.wantB {
			t.Errorf("%s: b is %s, want %s", st.name, got, st.wantB)
		}
		if got := status.Stage("c").State; got != st.wantC {
			t.Errorf("%s: c is %s, want %s", st.name, got, st.wantC)
		}
	}
	// The remedy of a failure comes from the error when it has one.
	for _, e := range mustRead(t, pipeline.JournalPath(f.r.WorkDir)) {
		if e.Kind == pipeline.EntryStageFailed && e.Error == "disk full" && e.Remedy != "free space" {
			t.Errorf("remedy %q, want the error's own", e.Remedy)
		}
	}
}

// TestOutputsAndReplay checks that later stages see earlier outputs, and that replay runs a
// finished stage afresh for the given nodes with its own previous output at hand.
func TestOutputsAndReplay(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	if err := f.r.Run(ctx, pipeline.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	const bOutput pipeline.OutputKey[map[string]string] = "b"
	out, ok, err := bOutput.Read(f.c.env)
	if !ok || err != nil || out["out"] != "B1" {
		t.Fatalf("c sees b's output %v (%v, %v)", out, ok, err)
	}
	if _, ok := f.b.env.Outputs["c"]; ok {
		t.Error("b sees the output of a later stage")
	}
	f.reset()
	if err := f.r.Replay(ctx, "b", []string{"w1"}); err != nil {
		t.Fatal(err)
	}
	if f.runs() != [3]int{0, 1, 0} || len(f.b.executed) != 3 {
		t.Fatalf("replay runs %v, executed %v; want only b, every step", f.runs(), f.b.executed)
	}
	if !f.b.env.Replay || !f.b.env.WantNode("w1") || f.b.env.WantNode("w2") {
		t.Errorf("replay env: replay %v nodes %v", f.b.env.Replay, f.b.env.Nodes)
	}
	if _, ok, _ := bOutput.Read(f.b.env); !ok {
		t.Error("replay does not see the stage's previous output")
	}
	if st := f.status(t); st.Stage("c").State != pipeline.StateSucceeded {
		t.Errorf("replay with the same output made c %s", st.Stage("c").State)
	}
	f.reset()
	f.b.output = "B9"
	if err := f.r.Replay(ctx, "b", nil); err != nil {
		t.Fatal(err)
	}
	if st := f.status(t); st.Stage("c").State != pipeline.StateStale {
		t.Errorf("replay with a new output left c %s, want stale", st.Stage("c").State)
	}
	// Refused before the journal is touched: unknown stage, unknown node, --node on a whole-site stage.
	before := len(mustRead(t, pipeline.JournalPath(f.r.WorkDir)))
	var ue *pipeline.UsageError
	for _, tc := range []struct {
		stage string
		nodes []string
		want  string
	}{
		{"nope", nil, `unknown stage "nope": the stages are a, b, c`},
		{"b", []string{"w1", "w9"}, "unknown node w9: the site's nodes are w1, w2"},
		{"c", []string{"w1"}, "stage c acts on the whole site: --node applies to b only"},
	} {
		err := f.r.Replay(ctx, tc.stage, tc.nodes)
		if !errors.As(err, &ue) || err.Error() != tc.want {
			t.Errorf("replay %s %v: %v, want a UsageError %q", tc.stage, tc.nodes, err, tc.want)
		}
	}
	if after := len(mustRead(t, pipeline.JournalPath(f.r.WorkDir))); after != before {
		t.Errorf("refused replays journaled %d entries", after-before)
	}
}

// TestInterrupt cancels a stage mid-way: the failure is journaled as interrupted with a remedy,
// the error unwraps to context.Canceled, and the next run resumes after the last step.
func TestInterrupt(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	f.b.steps = []string{"s1", "s2", "s3"}
	var mu sync.Mutex
	f.r.Sink = func(e pipeline.Event) {
		mu.Lock()
		defer mu.Unlock()
		if e.Kind == pipeline.StepDone && e.Step == "s2" {
			cancel()
		}
	}
	f.b.fail, f.b.failAt = context.Canceled, "s3"
	err := f.r.Run(ctx, pipeline.RunOptions{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled in the chain", err)
	}
	st := f.status(t)
	b := st.Stage("b")
	if b.State != pipeline.StateInterrupted || b.Remedy == "" || b.Steps != 2 {
		t.Fatalf("b: %+v, want interrupted with remedy and 2 steps", b)
	}
	if st.LastRun == nil || !st.LastRun.Ended || st.LastRun.Error == "" {
		t.Errorf("last run %+v, want ended with the error", st.LastRun)
	}
	f.reset()
	f.b.fail = nil
	if err := f.r.Run(context.Background(), pipeline.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(f.b.executed, []string{"s3"}) {
		t.Errorf("resume executed %v, want [s3]", f.b.executed)
	}
}

// TestSecretsScrubbed checks the second line of defence: URL credentials in error text never
// reach the journal or events, and the scrubber removes known values (JSON-escaped or not)
// from outputs, step data, error texts and stage events.
func TestSecretsScrubbed(t *testing.T) {
	const canary = `hunter2-"CANARY"\x`
	const urlPass = "s3cr3t-pass"
	f := newFixture(t)
	f.r.Scrub = redact.New(canary, "ab").Bytes
	f.a.output = "token " + canary
	f.b.steps = []string{"login " + canary}
	f.b.fail = fmt.Errorf("GET https://admin:%s@registry.example:5000/v2/: 401; token=%s", urlPass, canary)
	var mu sync.Mutex
	var events []pipeline.Event
	f.r.Sink = func(e pipeline.Event) { mu.Lock(); events = append(events, e); mu.Unlock() }
	f.a.hook = func(env *pipeline.Env) { env.Events(pipeline.Event{Kind: pipeline.Info, Message: "using " + canary}) }
	err := f.r.Run(context.Background(), pipeline.RunOptions{})
	if err == nil {
		t.Fatal("want failure")
	}
	data, _ := os.ReadFile(pipeline.JournalPath(f.r.WorkDir))
	for _, secret := range []string{canary, "hunter2", urlPass} {
		if strings.Contains(string(data), secret) {
			t.Fatalf("%q in the journal:\n%s", secret, data)
		}
		for _, e := range events {
			if strings.Contains(e.Message, secret) || strings.Contains(e.Step, secret) {
				t.Fatalf("%q in event %+v", secret, e)
			}
		}
		st, _ := f.r.Status()
		if raw, _ := json.Marshal(st); strings.Contains(string(raw), secret) {
			t.Fatalf("%q in status", secret)
		}
	}
	if !strings.Contains(string(data), "https://REDACTED@registry.example:5000") || !strings.Contains(string(data), "token "+redact.Mark) {
		t.Errorf("secrets not replaced in %s", data)
	}
}

// TestPlan says what would happen without changing anything.
func TestPlan(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	plans, err := f.r.Plan(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range plans {
		if p.Action != pipeline.PlanRun || p.Reason != "first run" {
			t.Errorf("fresh plan %s: %s (%s)", p.Stage, p.Action, p.Reason)
		}
	}
	if _, warn, _ := pipeline.ReadJournal(pipeline.JournalPath(f.r.WorkDir)); warn != nil {
		t.Error(warn)
	}
	if err := f.r.Run(ctx, pipeline.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	before := len(mustRead(t, pipeline.JournalPath(f.r.WorkDir)))
	f.a.input = "2"
	f.reset()
	plans, err = f.r.Plan(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := []string{}
	for _, p := range plans {
		got = append(got, p.Stage+":"+p.Action)
	}
	if want := []string{"a:run", "b:run", "c:run"}; !slices.Equal(got, want) {
		t.Errorf("plan after input change %v, want %v (%+v)", got, want, plans)
	}
	if f.runs() != [3]int{} || len(mustRead(t, pipeline.JournalPath(f.r.WorkDir))) != before {
		t.Error("plan ran a stage or wrote the journal")
	}
	f.a.input = "1"
	f.c.verify = errors.New("drifted")
	plans, _ = f.r.Plan(ctx)
	if plans[0].Action != pipeline.PlanSkip || plans[2].Action != pipeline.PlanRun || !strings.Contains(plans[2].Reason, "drifted") {
		t.Errorf("plan with verify failure: %+v", plans)
	}
}

// alwaysStage runs on every pass and returns a different output each time.
type alwaysStage struct{ runs int }

func (*alwaysStage) Name() string                      { return "pre" }
func (*alwaysStage) Summary() string                   { return "read-only checks" }
func (*alwaysStage) AlwaysRun() bool                   { return true }
func (*alwaysStage) Inputs(*pipeline.Env) (any, error) { return "same", nil }
func (s *alwaysStage) Run(context.Context, *pipeline.Env) (any, error) {
	s.runs++
	return map[string]int{"run": s.runs}, nil
}

// TestAlwaysRun: an AlwaysRunner stage runs on every pass, and its ever-changing output never
// makes later stages stale.
func TestAlwaysRun(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	pre := &alwaysStage{}
	f.r.Stages = append([]pipeline.Stage{pre}, f.r.Stages...)
	for pass := 1; pass <= 3; pass++ {
		f.reset()
		if err := f.r.Run(ctx, pipeline.RunOptions{}); err != nil {
			t.Fatal(err)
		}
		want := [3]int{0, 0, 0}
		if pass == 1 {
			want = [3]int{1, 1, 1}
		}
		if pre.runs != pass || f.runs() != want {
			t.Fatalf("pass %d: pre ran %d times, others %v; want %d and %v", pass, pre.runs, f.runs(), pass, want)
		}
	}
	plans, err := f.r.Plan(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := []string{}
	for _, p := range plans {
		got = append(got, p.Stage+":"+p.Action)
	}
	if want := []string{"pre:run", "a:skip", "b:skip", "c:skip"}; !slices.Equal(got, want) {
		t.Errorf("plan %v, want %v", got, want)
	}
}
