package stages

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/bmc"
	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// fakeISO plays the iso stage for the boot stage: its output (per-node ISO URL and ETag) is what
// a test changes between runs.
type fakeISO struct{ out ISOOutput }

func (s *fakeISO) Name() string                                    { return NameISO }
func (s *fakeISO) Summary() string                                 { return "test iso" }
func (s *fakeISO) Inputs(*pipeline.Env) (any, error)               { return s.out, nil }
func (s *fakeISO) Run(context.Context, *pipeline.Env) (any, error) { return s.out, nil }

func (s *fakeISO) set(node, url, etag string) {
	n := s.out.Nodes[node]
	n.URL, n.ETag = url, etag
	s.out.Nodes[node] = n
}

// carryLab is the boot stage under the real runner and journal, over simulated iDRACs.
type carryLab struct {
	*bootLab
	iso    *fakeISO
	r      *pipeline.Runner
	powers map[string]int // power actions expected so far, by node

	mu     sync.Mutex
	events []pipeline.Event
}

func newCarryLab(t *testing.T, names ...string) *carryLab {
	lab := newBootLab(t, names...)
	iso := &fakeISO{}
	iso.out.Nodes = map[string]NodeISO{}
	for _, n := range names {
		iso.set(n, lab.iso.URL()+"/agent.x86_64.iso", `"v1"`)
	}
	l := &carryLab{bootLab: lab, iso: iso, powers: map[string]int{}}
	l.r = &pipeline.Runner{Stages: []pipeline.Stage{iso, fastBoot()}, Site: lab.site, WorkDir: t.TempDir(), Command: "test",
		Sink: func(e pipeline.Event) {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.events = append(l.events, e)
		}}
	return l
}

// warnings returns and forgets the warnings seen so far.
func (l *carryLab) warnings() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var w []string
	for _, e := range l.events {
		// The lab has no fetch log: every booted node is also "booted, unverified" (its own test).
		if e.Kind == pipeline.Warning && !strings.Contains(e.Message, bmc.UnverifiedPrefix) {
			w = append(w, e.Message)
		}
	}
	l.events = nil
	return w
}

// expect adds the power actions this step should cause and checks every simulator's count.
func (l *carryLab) expect(t *testing.T, step string, more ...string) {
	t.Helper()
	for _, n := range more {
		l.powers[n]++
	}
	for n, sim := range l.sims {
		st := sim.Stats()
		if st.PowerActions != l.powers[n] {
			t.Errorf("%s: %s: %d power actions, want %d", step, n, st.PowerActions, l.powers[n])
		}
		if l.powers[n] > 0 && st.BootedFrom != l.iso.out.Nodes[n].URL {
			t.Errorf("%s: %s booted from %q, want %q", step, n, st.BootedFrom, l.iso.out.Nodes[n].URL)
		}
	}
}

func (l *carryLab) run(t *testing.T, step string) error {
	t.Helper()
	err := l.r.Run(context.Background(), pipeline.RunOptions{})
	st, serr := l.r.Status()
	if serr != nil || st.Chain != "" {
		t.Fatalf("%s: status %v %s", step, serr, st.Chain)
	}
	return err
}

// onceEach checks that no step is journaled twice in one attempt.
func (l *carryLab) onceEach(t *testing.T) {
	t.Helper()
	entries, _, err := pipeline.ReadJournal(pipeline.JournalPath(l.r.WorkDir))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, e := range entries {
		if e.Kind != pipeline.EntryStepDone {
			continue
		}
		k := fmt.Sprintf("%s attempt %d %s", e.Stage, e.Attempt, e.Step)
		if seen[k] {
			t.Errorf("%s journaled twice", k)
		}
		seen[k] = true
	}
}

// bootOutput is the boot stage's last successful output.
func (l *carryLab) bootOutput(t *testing.T) BootOutput {
	t.Helper()
	st, _ := l.r.Status()
	var out BootOutput
	if err := json.Unmarshal(st.Stage("boot").Output, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestBootStageKeepsUnchangedNodes: adding a node, changing one node's ISO URL, profile entry or
// BMC address starts a new attempt of the boot stage that acts on that node only; the others,
// powered in earlier attempts with the same inputs, are not power-cycled again. A new ETag
// alone warns. Replay --node still forces its node.
func TestBootStageKeepsUnchangedNodes(t *testing.T) {
	l := newCarryLab(t, "m0", "m1", "m2", "w3")
	all := l.site.Nodes
	l.site.Nodes = all[:3:3]
	if err := l.run(t, "first run"); err != nil {
		t.Fatal(err)
	}
	l.expect(t, "first run", "m0", "m1", "m2")

	l.site.Nodes = all
	if err := l.run(t, "add w3"); err != nil {
		t.Fatal(err)
	}
	l.expect(t, "add w3", "w3")
	st, _ := l.r.Status()
	if bs := st.Stage("boot"); bs.Attempt != 2 || bs.State != pipeline.StateSucceeded {
		t.Errorf("boot: attempt %d %s, want a second attempt, succeeded", bs.Attempt, bs.State)
	}
	out := l.bootOutput(t)
	if len(out.Nodes) != 4 || len(out.Failed) != 0 {
		t.Fatalf("output %+v, want 4 nodes", out)
	}
	for _, n := range out.Nodes {
		if n.Resumed != (n.Node != "w3") || n.Image == "" {
			t.Errorf("output for %s: resumed %t image %q", n.Node, n.Resumed, n.Image)
		}
	}
	// The second attempt names the kept nodes and the power action that booted them.
	entries, _, err := pipeline.ReadJournal(pipeline.JournalPath(l.r.WorkDir))
	if err != nil {
		t.Fatal(err)
	}
	carried := map[string]bool{}
	for _, e := range entries {
		if e.Kind == pipeline.EntryStepDone && e.Attempt == 2 && strings.HasSuffix(e.Step, "/"+bootStepCarried) {
			var rec struct {
				Power struct{ Action string } `json:"power"`
			}
			if json.Unmarshal(e.Data, &rec) != nil || rec.Power.Action != "On" {
				t.Errorf("%s: %s, want the earlier power action", e.Step, e.Data)
			}
			carried[strings.TrimSuffix(strings.TrimPrefix(e.Step, "node:"), "/"+bootStepCarried)] = true
		}
	}
	if len(carried) != 3 || carried["w3"] {
		t.Errorf("carried steps for %v, want m0, m1, m2", carried)
	}

	l.iso.set("m1", l.bootLab.iso.URL()+"/nodes/m1.iso", `"v1"`)
	if err := l.run(t, "m1 URL"); err != nil {
		t.Fatal(err)
	}
	l.expect(t, "m1 URL", "m1")

	// A rebuilt ISO (every profile change rebuilds it: new ETags for every node) is not a reason
	// to reboot a running node; the engineer is told how to, if wanted.
	l.warnings()
	l.iso.set("m2", l.iso.out.Nodes["m2"].URL, `"v2"`)
	if err := l.run(t, "m2 ETag"); err != nil {
		t.Fatal(err)
	}
	l.expect(t, "m2 ETag")
	if w := l.warnings(); len(w) != 1 || !strings.Contains(w[0], "replay boot --node m2") || !strings.Contains(w[0], `"v2"`) {
		t.Errorf("warnings %q, want one naming m2's new ISO and the replay", w)
	}

	// A change to m2's profile entry rebuilds the ISO (new ETags for all, as agent-config lists
	// every host): m2 is booted again, the others are warned about.
	l.site.Nodes[2].RootDevice = "/dev/disk/by-path/pci-0000:3b:00.0-nvme-1"
	for n, v := range l.iso.out.Nodes {
		l.iso.set(n, v.URL, `"v4"`)
	}
	if err := l.run(t, "m2 profile entry"); err != nil {
		t.Fatal(err)
	}
	l.expect(t, "m2 profile entry", "m2")
	if w := l.warnings(); len(w) != 3 || strings.Contains(strings.Join(w, "\n"), "node m2") {
		t.Errorf("warnings %q, want one for each node left running (m0, m1, w3)", w)
	}

	l.site.Nodes[3].BMC.Address = strings.Replace(l.site.Nodes[3].BMC.Address, "127.0.0.1", "localhost", 1)
	if err := l.run(t, "w3 address"); err != nil {
		t.Fatal(err)
	}
	l.expect(t, "w3 address", "w3")

	if err := l.r.Replay(context.Background(), "boot", []string{"m0"}); err != nil {
		t.Fatal(err)
	}
	l.expect(t, "replay --node m0", "m0")

	if err := l.run(t, "unchanged"); err != nil {
		t.Fatal(err)
	}
	l.expect(t, "unchanged")

	// Nodes last booted before the replay, and the replayed one, are all kept.
	l.iso.set("m1", l.iso.out.Nodes["m1"].URL+"?v=3", `"v3"`)
	if err := l.run(t, "m1 ETag after replay"); err != nil {
		t.Fatal(err)
	}
	l.expect(t, "m1 ETag after replay", "m1")
	st, _ = l.r.Status()
	if bs := st.Stage("boot"); bs.Attempt != 8 {
		t.Errorf("boot at attempt %d, want 8 (one per change and the replay)", bs.Attempt)
	}

	// The journal holds the fingerprint in every per-node record, and never the password.
	entries, _, err = pipeline.ReadJournal(pipeline.JournalPath(l.r.WorkDir))
	if err != nil {
		t.Fatal(err)
	}
	powerSteps := 0
	for _, e := range entries {
		if strings.Contains(string(e.Data), bootTestPassword) {
			t.Fatal("the BMC password is in the journal")
		}
		if e.Kind == pipeline.EntryStepDone && e.Stage == "boot" && !strings.Contains(string(e.Data), `"nodeInputs":"sha256:`) {
			t.Errorf("step %s without the node's fingerprint: %s", e.Step, e.Data)
		}
		if e.Kind == pipeline.EntryStepDone && strings.HasSuffix(e.Step, "/"+bmc.StepPower) {
			powerSteps++
		}
	}
	l.onceEach(t)
	if want := 9; powerSteps != want {
		t.Errorf("%d power steps journaled, want %d (one per power action)", powerSteps, want)
	}
}

// TestBootStageFixOneNode: a wrong password on one node fails the stage after the others are
// powered; fixing that node's secret reference (its inputs change) and adding a worker starts a
// new attempt that powers those two only. A failed attempt that kept nodes resumes keeping them.
func TestBootStageFixOneNode(t *testing.T) {
	l := newCarryLab(t, "m0", "m1", "m2", "w3", "w4")
	t.Setenv("BOOT_TEST_WRONG_PASSWORD", "not-"+bootTestPassword)
	all := l.site.Nodes
	l.site.Nodes = all[:3:3]
	l.site.Nodes[2].BMC.Password = site.SecretRef{Env: "BOOT_TEST_WRONG_PASSWORD"}
	err := l.run(t, "wrong password")
	if err == nil || !strings.Contains(err.Error(), "m2") {
		t.Fatalf("want m2 to fail, got %v", err)
	}
	l.expect(t, "wrong password", "m0", "m1")

	l.site.Nodes = all[:4:4]
	l.site.Nodes[2].BMC.Password = site.SecretRef{Env: "BOOT_TEST_BMC_PASSWORD"}
	if err := l.run(t, "fixed"); err != nil {
		t.Fatal(err)
	}
	l.expect(t, "fixed", "m2", "w3")
	st, _ := l.r.Status()
	if bs := st.Stage("boot"); bs.Attempt != 2 {
		t.Errorf("boot at attempt %d, want 2", bs.Attempt)
	}

	// w4 joins with a wrong password value: attempt 3 keeps the four booted nodes and fails on
	// w4; fixing the value (same reference, same inputs) resumes attempt 3, which keeps them again.
	t.Setenv("BOOT_TEST_W4_PASSWORD", "wrong")
	l.site.Nodes = all
	l.site.Nodes[4].BMC.Password = site.SecretRef{Env: "BOOT_TEST_W4_PASSWORD"}
	if err := l.run(t, "w4 wrong value"); err == nil || !strings.Contains(err.Error(), "w4") {
		t.Fatalf("want w4 to fail, got %v", err)
	}
	l.expect(t, "w4 wrong value")
	t.Setenv("BOOT_TEST_W4_PASSWORD", bootTestPassword)
	if err := l.run(t, "w4 value fixed"); err != nil {
		t.Fatal(err)
	}
	l.expect(t, "w4 value fixed", "w4")
	st, _ = l.r.Status()
	if bs := st.Stage("boot"); bs.Attempt != 3 || bs.Runs != 2 || bs.State != pipeline.StateSucceeded {
		t.Errorf("boot: attempt %d runs %d %s, want attempt 3 resumed once, succeeded", bs.Attempt, bs.Runs, bs.State)
	}
	if out := l.bootOutput(t); len(out.Nodes) != 5 || len(out.Failed) != 0 {
		t.Errorf("output %+v, want 5 nodes booted", out)
	}
	l.onceEach(t)
}

// TestBootJournalCarry checks the carry rule on journal records directly, including a node
// acted on with other inputs after its last power step.
func TestBootJournalCarry(t *testing.T) {
	stamp := func(fp, extra string) json.RawMessage {
		return json.RawMessage(fmt.Sprintf(`{"nodeInputs":%q%s}`, fp, extra))
	}
	key := func(step string) string { return bmc.StepKey("n", step) }
	// Attempt 1 powered n with inputs A; attempt 2 started n with inputs B and recorded only
	// the power intent before it stopped.
	prev := map[string]json.RawMessage{
		key(bootStepInputs):      stamp("B", ""),
		key(bmc.StepPower):       stamp("A", `,"action":"On"`),
		key(bmc.StepPowerIntent): stamp("B", `,"action":"ForceRestart"`),
	}
	for _, tc := range []struct {
		fp            string
		power, intent bool
		recordsMarker bool
	}{
		{fp: "A", recordsMarker: true}, // acted on with B since: nothing carried, start afresh
		{fp: "B", intent: true},        // B's intent carried (read back first), A's power not
		{fp: "C", recordsMarker: true},
	} {
		steps := &carrySteps{bootSteps: bootSteps{m: map[string][]byte{}}, prev: prev}
		j, carried, err := newBootJournal(steps, map[string]nodeStamp{"n": {NodeInputs: tc.fp}}, []string{"n"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var pr struct{ Action string }
		if got := j.Done(key(bmc.StepPower), &pr); got != tc.power {
			t.Errorf("inputs %s: power done %t, want %t", tc.fp, got, tc.power)
		}
		if got := j.Done(key(bmc.StepPowerIntent), &pr); got != tc.intent || (got && pr.Action != "ForceRestart") {
			t.Errorf("inputs %s: intent done %t (%q), want %t", tc.fp, got, pr.Action, tc.intent)
		}
		_, recorded := steps.m[key(bootStepInputs)]
		if recorded != tc.recordsMarker || (len(carried) == 1) == tc.recordsMarker {
			t.Errorf("inputs %s: marker recorded %t, carried %v", tc.fp, recorded, carried)
		}
		if err := j.Record(key(bmc.StepMedia), map[string]string{"image": "u"}); err != nil {
			t.Fatal(err)
		}
		if got := string(steps.m[key(bmc.StepMedia)]); got != fmt.Sprintf(`{"nodeInputs":%q,"image":"u"}`, tc.fp) {
			t.Errorf("recorded %s", got)
		}
	}
}

// carrySteps adds earlier attempts' records to bootSteps.
type carrySteps struct {
	bootSteps
	prev map[string]json.RawMessage
}

func (s *carrySteps) Previous(key string, out any) bool {
	raw, ok := s.prev[key]
	return ok && (out == nil || json.Unmarshal(raw, out) == nil)
}
