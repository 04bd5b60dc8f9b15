package bmc_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/bmc"
	"github.com/bootstrap-dev/bootstrap/internal/bmc/bmctest"
)

// killAfterPower is a journal whose process "dies" once the power step is journaled: the ISO
// server goes down with it and the run's context ends.
type killAfterPower struct {
	*memJournal
	iso    *bmctest.ISOServer
	cancel context.CancelFunc
	keep   bool // the ISO stays served (another server, or the node read it before the kill)
}

func (j *killAfterPower) Record(key string, data any) error {
	err := j.memJournal.Record(key, data)
	// The ISO server goes down with the process before the power action is sent (at its
	// journaled intent): once the action is out, the simulated node reads the ISO within its
	// BootDelay, which a loaded machine can let pass before the power step's Record (the test
	// then saw a node booted from its ISO in the killed run).
	if strings.HasSuffix(key, "/"+bmc.StepPowerIntent) {
		j.iso.SetDown(!j.keep)
	}
	if strings.HasSuffix(key, "/"+bmc.StepPower) {
		j.cancel()
	}
	return err
}

// TestResumeBootsAgainWhenISONotRead: a run killed between the power action and the node
// reading its ISO took the ISO server with it; the node started from its disk, and its BMC
// reads back as booted. The resumed run, with the ISO server's fetch log as evidence, sees no
// read after the power action and powers the node once more (journaled with the reason); the
// node boots its ISO. Against every simulator profile.
func TestResumeBootsAgainWhenISONotRead(t *testing.T) {
	for _, pc := range profileCases() {
		t.Run(pc.name, func(t *testing.T) {
			iso := bmctest.NewISOServer()
			defer iso.Close()
			isoURL := iso.URL() + "/agent.x86_64.iso"
			path, _ := url.Parse(isoURL)
			evidence := bmc.WithBootEvidence(func(_ context.Context, node, u string, since time.Time) error {
				if iso.ReadsSince(path.Path, since) == 0 {
					return errors.New("no read")
				}
				return nil
			})
			o := pc.opts
			o.Power = "On"
			sim, target := simNode(t, "n-"+pc.name, o)
			ctx, cancel := context.WithCancel(context.Background())
			j := &killAfterPower{memJournal: newMemJournal(), iso: iso, cancel: cancel}
			if _, err := bmc.BootNode(ctx, target, isoURL, j, append(fast(), evidence)...); err == nil {
				t.Fatal("the killed run succeeded")
			}
			idle(t, sim)
			if st := sim.Stats(); st.PowerActions != 1 || st.BootedFrom != "disk" {
				t.Fatalf("after the kill: %d power actions, booted from %q; want 1, disk", st.PowerActions, st.BootedFrom)
			}
			iso.SetDown(false) // the resumed process serves the ISO again
			res, err := bmc.BootNode(context.Background(), target, isoURL, j.memJournal, append(fast(), evidence)...)
			if err != nil {
				t.Fatalf("resumed run: %v", err)
			}
			idle(t, sim) // the evidence is the boot's first read: its last may still be on the way
			if st := sim.Stats(); st.PowerActions != 2 || st.BootedFrom != isoURL {
				t.Errorf("resumed: %d power actions, booted from %q; want 2, the ISO", st.PowerActions, st.BootedFrom)
			}
			if res.PowerAction != "ForceRestart" {
				t.Errorf("resumed power action %q", res.PowerAction)
			}
			var pr map[string]any
			if !j.Done(bmc.StepKey(target.Node, bmc.StepPower), &pr) || !strings.Contains(pr["reason"].(string), "did not read its ISO") {
				b, _ := json.Marshal(pr)
				t.Errorf("power step journaled without the reason: %s", b)
			}
			// A third run finds everything done: no power action.
			if _, err := bmc.BootNode(context.Background(), target, isoURL, j.memJournal, append(fast(), evidence)...); err != nil {
				t.Fatal(err)
			}
			if st := sim.Stats(); st.PowerActions != 2 {
				t.Errorf("a finished node was powered again: %d power actions", st.PowerActions)
			}
		})
	}
}

// TestResumeKeepsANodeThatReadItsISO: the run is killed after the power action, but the node
// reads its ISO (served on): the resumed run finds the read in the fetch log and sends no second
// power action.
func TestResumeKeepsANodeThatReadItsISO(t *testing.T) {
	for _, pc := range profileCases() {
		t.Run(pc.name, func(t *testing.T) {
			iso := bmctest.NewISOServer()
			defer iso.Close()
			isoURL := iso.URL() + "/agent.x86_64.iso"
			evidence := bmc.WithBootEvidence(func(_ context.Context, node, u string, since time.Time) error {
				if iso.ReadsSince("/agent.x86_64.iso", since) == 0 {
					return errors.New("no read")
				}
				return nil
			})
			sim, target := simNode(t, "n-"+pc.name, pc.opts)
			ctx, cancel := context.WithCancel(context.Background())
			j := &killAfterPower{memJournal: newMemJournal(), iso: iso, cancel: cancel, keep: true}
			if _, err := bmc.BootNode(ctx, target, isoURL, j, append(fast(), evidence)...); err == nil {
				t.Fatal("the killed run succeeded")
			}
			if _, err := bmc.BootNode(context.Background(), target, isoURL, j.memJournal, append(fast(), evidence)...); err != nil {
				t.Fatalf("resumed run: %v", err)
			}
			idle(t, sim)
			if st := sim.Stats(); st.PowerActions != 1 || st.BootedFrom != isoURL {
				t.Errorf("%d power actions, booted from %q; want 1, the ISO", st.PowerActions, st.BootedFrom)
			}
		})
	}
}

// idle waits until every power action the simulator accepted has reached its boot.
func idle(t *testing.T, sim *bmctest.BMC) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := sim.Idle(ctx); err != nil {
		t.Fatal(err)
	}
}
