package stages

import (
	"context"
	"strings"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/bmc"
	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
)

// TestBootStageSaysUnverified: with the ISO served elsewhere (no fetch log) a node whose BMC shows
// no sign of a reboot (generic, powered on: a persistent override, no LastResetTime) is "booted,
// unverified" in the stage's output, with the reason, and a warning event says so; the iDRAC9
// node's output carries its evidence and the same caveat that no fetch log saw its read.
func TestBootStageSaysUnverified(t *testing.T) {
	lab := newBootLab(t, "m0", "generic-1")
	// A first run powers the nodes On; a second, fresh one (a replay) restarts them, so power
	// reads On throughout.
	steps := &bootSteps{m: map[string][]byte{}}
	var events []pipeline.Event
	if _, err := fastBoot().Run(context.Background(), lab.env(steps, &events)); err != nil {
		t.Fatal(err)
	}
	steps2 := &bootSteps{m: map[string][]byte{}}
	events = nil
	out, err := fastBoot().Run(context.Background(), lab.env(steps2, &events))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bmc.NodeResult{}
	for _, n := range out.(BootOutput).Nodes {
		got[n.Node] = n
	}
	if u := got["generic-1"].Unverified; !strings.Contains(u, "no sign of a reboot") {
		t.Errorf("generic-1 unverified %q; want the reason", u)
	}
	if g := got["m0"]; !strings.Contains(g.Evidence, "LastResetTime advanced") || !strings.Contains(g.Unverified, "served elsewhere") {
		t.Errorf("m0 evidence %q, unverified %q", g.Evidence, g.Unverified)
	}
	warned := false
	for _, e := range events {
		warned = warned || (e.Kind == pipeline.Warning && e.Node == "generic-1" && strings.Contains(e.Message, "booted, unverified"))
	}
	if !warned {
		t.Error("no warning event for the unverified node")
	}
}
