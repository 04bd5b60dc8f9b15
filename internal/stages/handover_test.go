package stages

import (
	"context"
	"encoding/json"
	"github.com/bootstrap-dev/bootstrap/internal/isoserver"
	"strings"
	"testing"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/bmc"
	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
)

// TestMixedFleetBootAndHandover: one run boots an iDRAC9, a generic Redfish BMC that keeps every
// override Continuous, and a PATCH-only BMC. Only the generic node needs a persistent override;
// the install stage takes it off when the node writes its disk and ejects the ISO once it runs
// from its disk, each journaled once; the boot stage's Verify accepts the handed-over node.
func TestMixedFleetBootAndHandover(t *testing.T) {
	lab := newBootLab(t, "idrac-0", "generic-1", "patch-2")
	iso := lab.iso.URL() + "/" + DefaultISOName
	var events []pipeline.Event
	env := lab.env(&bootSteps{m: map[string][]byte{}}, &events)
	stage := fastBoot()
	out, err := stage.Run(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	bo := out.(BootOutput)
	for _, n := range bo.Nodes {
		if st := lab.sims[n.Node].Stats(); st.PowerActions != 1 || st.BootedFrom != iso {
			t.Errorf("%s: %d power actions, booted from %q", n.Node, st.PowerActions, st.BootedFrom)
		}
		if n.Persistent != (n.Node == "generic-1") {
			t.Errorf("%s: persistent override %t (method %s)", n.Node, n.Persistent, n.Method)
		}
	}
	said := false
	for _, e := range events {
		said = said || (e.Node == "generic-1" && e.Step == bmc.StepBootOverride && strings.Contains(e.Message, "Continuous"))
	}
	if !said {
		t.Error("no event says why generic-1 got a persistent override")
	}

	raw, _ := json.Marshal(bo)
	steps := &bootSteps{m: map[string][]byte{}}
	ienv := lab.env(steps, nil)
	ienv.Outputs["boot"] = raw
	opts := []bmc.Option{bmc.WithRetry(3, 5*time.Millisecond), bmc.WithPoll(5*time.Millisecond, 5*time.Second)}
	ho, err := newHandover(ienv, opts)
	if err != nil {
		t.Fatal(err)
	}
	if nodes := ho.Nodes(); len(nodes) != 1 || nodes[0] != "generic-1" {
		t.Fatalf("handover nodes %v; want generic-1 only", nodes)
	}
	ctx := context.Background()
	g := lab.sims["generic-1"]
	ho.OnHostStage(ctx, "generic-1", "Installing")
	if st := g.Stats(); st.Override != "Cd/Continuous" {
		t.Errorf("override taken off before the disk was written: %s", st.Override)
	}
	ho.OnHostStage(ctx, "generic-1.example.com", "Writing image to disk")
	if st := g.Stats(); strings.HasPrefix(st.Override, "Cd/") || st.Slots["Cd"] != iso {
		t.Errorf("after the disk write started: override %s, slots %v; want the override off and the ISO still in (the live system reads it)", st.Override, st.Slots)
	}
	ho.OnHostStage(ctx, "generic-1", "Joined")
	if st := g.Stats(); len(st.Slots) != 0 {
		t.Errorf("after the node joined: slots %v; want the ISO ejected", st.Slots)
	}
	for _, k := range []string{bmc.StepOverrideOff, bmc.StepHandover} {
		if !steps.Done(bmc.StepKey("generic-1", k), nil) {
			t.Errorf("step %s not journaled", k)
		}
	}
	writes := map[string]int{}
	for n, s := range lab.sims {
		writes[n] = s.Stats().Writes
	}
	if err := ho.Finish(ctx); err != nil {
		t.Fatal(err)
	}
	for n, s := range lab.sims {
		if w := s.Stats().Writes; w != writes[n] {
			t.Errorf("%s: finish wrote %d more times; the handover was journaled already", n, w-writes[n])
		}
	}
	// A resumed install (new process, nothing journaled by this attempt) only reads.
	aenv := lab.env(&bootSteps{m: map[string][]byte{}}, nil)
	aenv.Outputs["boot"] = raw
	again, _ := newHandover(aenv, opts)
	if err := again.Finish(ctx); err != nil {
		t.Fatal(err)
	}
	if w := g.Stats().Writes; w != writes["generic-1"] {
		t.Errorf("a resumed handover of a handed-over node wrote %d times", w-writes["generic-1"])
	}

	venv := lab.env(&bootSteps{m: map[string][]byte{}}, nil)
	venv.Outputs["boot"] = raw
	if err := stage.Verify(ctx, venv); err != nil {
		t.Errorf("Verify after the handover: %v", err)
	}
	if err := (Boot{Options: stage.Options}).Verify(ctx, lab.env(&bootSteps{m: map[string][]byte{}}, nil)); err == nil {
		t.Error("Verify without the boot output accepted a node whose ISO is gone")
	}
}

// TestBootStageExternalISO: iso.baseURL points at another web server. The boot stage (and so
// `replay boot`) boots every node from it without a local ISO build and without starting the
// local server, whose Ensure would fail for want of a build.
func TestBootStageExternalISO(t *testing.T) {
	lab := newBootLab(t, "idrac-0", "generic-1")
	lab.site.ISO.ServeAddress = "127.0.0.1:1" // this host's own server would listen here
	var events []pipeline.Event
	env := lab.env(&bootSteps{m: map[string][]byte{}}, &events)
	stage := fastBoot()
	stage.Serve = ServeISO(&isoserver.Server{}) // the production server: no ISO was built here
	for _, replay := range []bool{false, true} {
		env.Replay = replay
		if replay {
			env.Nodes, env.Steps = []string{"generic-1"}, &bootSteps{m: map[string][]byte{}}
		}
		if _, err := stage.Run(context.Background(), env); err != nil {
			t.Fatalf("replay=%t: %v", replay, err)
		}
	}
	iso := lab.iso.URL() + "/" + DefaultISOName
	for n, s := range lab.sims {
		if st := s.Stats(); st.BootedFrom != iso {
			t.Errorf("%s booted from %q, want %s", n, st.BootedFrom, iso)
		}
	}
	if st := lab.sims["generic-1"].Stats(); st.PowerActions != 2 {
		t.Errorf("generic-1: %d power actions; want 2 (the run and the replay)", st.PowerActions)
	}
	said := false
	for _, e := range events {
		said = said || strings.Contains(e.Message, "served elsewhere")
	}
	if !said {
		t.Error("no event says the ISO is served elsewhere")
	}
}

// TestReplayBootResumesAnInterruptedReplay: `bootstrap replay boot --node X` interrupted after
// its power action (Ctrl-C or a kill) and run again resumes that replay: no second power
// action. A replay after a finished replay still forces the node.
func TestReplayBootResumesAnInterruptedReplay(t *testing.T) {
	lab := newBootLab(t, "idrac-0", "generic-1")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := &pipeline.Runner{Stages: []pipeline.Stage{fastBoot()}, Site: lab.site, WorkDir: t.TempDir(), Command: "replay"}
	if err := r.Run(context.Background(), pipeline.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	r.Sink = func(e pipeline.Event) {
		if e.Kind == pipeline.StepDone && e.Step == bmc.StepKey("generic-1", bmc.StepPower) {
			cancel() // killed right after the power action was journaled
		}
	}
	g := lab.sims["generic-1"]
	if n := g.Stats().PowerActions; n != 1 {
		t.Fatalf("run: %d power actions", n)
	}
	if err := r.Replay(ctx, "boot", []string{"generic-1"}); err == nil {
		t.Fatal("the interrupted replay succeeded")
	}
	if n := g.Stats().PowerActions; n != 2 {
		t.Fatalf("the replay sent %d power actions, want 1", n-1)
	}
	r.Sink = nil
	if err := r.Replay(context.Background(), "boot", []string{"generic-1"}); err != nil {
		t.Fatalf("the replay run again: %v", err)
	}
	idleCtx, stop := context.WithTimeout(context.Background(), 5*time.Second)
	defer stop()
	if err := g.Idle(idleCtx); err != nil {
		t.Fatal(err)
	}
	if n := g.Stats().PowerActions; n != 2 {
		t.Errorf("the resumed replay powered the node again: %d power actions, want 2", n)
	}
	if err := r.Replay(context.Background(), "boot", []string{"generic-1"}); err != nil {
		t.Fatal(err)
	}
	if n := g.Stats().PowerActions; n != 3 {
		t.Errorf("a new replay after a finished one: %d power actions, want 3 (a replay forces)", n)
	}
	if n := lab.sims["idrac-0"].Stats().PowerActions; n != 1 {
		t.Errorf("idrac-0 (not replayed): %d power actions", n)
	}
}
