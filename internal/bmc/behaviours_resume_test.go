package bmc_test

import (
	"context"
	"errors"
	"net/url"
	"testing"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/bmc"
	"github.com/bootstrap-dev/bootstrap/internal/bmc/bmctest"
	"github.com/bootstrap-dev/bootstrap/internal/finding"
)

// TestBehavioursKillAndResume runs every vendor behaviour that boots, and a node of the
// multi-system service, through preflight (no failed check), a run killed right after its power
// action with the ISO server gone, the resumed run (the node did not read its ISO: powered once
// more, then booted from it), and a third run that powers nothing.
func TestBehavioursKillAndResume(t *testing.T) {
	type node struct {
		sim    *bmctest.BMC
		target bmc.Target
	}
	cases := map[string]func(t *testing.T) node{
		"multi-system": func(t *testing.T) node {
			vms := append([]bmctest.Member(nil), threeVMs...)
			vms[2].Power = "On"
			m := bmctest.NewMulti(bmctest.Options{Cert: sharedCert(t)}, vms)
			t.Cleanup(m.Close)
			return node{m.System(2), multiTarget(t, m, "vm-c", m.SystemURL(2), vms[2].MACs[0])}
		},
	}
	for name, o := range bmctest.Behaviours() {
		if name == "noop-reset" || name == "ignored-once-override" {
			continue // they do not boot: TestVendorBehaviours covers their failure
		}
		cases[name] = func(t *testing.T) node {
			o.Power = "On"
			sim, target := simNode(t, "n", o)
			return node{sim, target}
		}
	}
	for name, start := range cases {
		t.Run(name, func(t *testing.T) {
			iso := bmctest.NewISOServer()
			defer iso.Close()
			isoURL := iso.URL() + "/agent.x86_64.iso"
			p, _ := url.Parse(isoURL)
			evidence := bmc.WithBootEvidence(func(_ context.Context, _, _ string, since time.Time) error {
				if iso.ReadsSince(p.Path, since) == 0 {
					return errors.New("no read")
				}
				return nil
			})
			n := start(t)
			for _, f := range bmc.Preflight(context.Background(), bmc.PreflightNode{Target: n.target, Expect: bmc.Expect{ISOURL: isoURL}}, fast()...) {
				if f.Status == finding.Fail {
					t.Errorf("preflight %s failed: %s", f.Check, f.Message)
				}
			}
			ctx, cancel := context.WithCancel(context.Background())
			j := &killAfterPower{memJournal: newMemJournal(), iso: iso, cancel: cancel}
			if _, err := bmc.BootNode(ctx, n.target, isoURL, j, append(fast(), evidence)...); err == nil {
				t.Fatal("the killed run succeeded")
			}
			idle(t, n.sim)
			iso.SetDown(false)
			res, err := bmc.BootNode(context.Background(), n.target, isoURL, j.memJournal, append(fast(), evidence)...)
			if err != nil {
				t.Fatalf("resumed run: %v", err)
			}
			idle(t, n.sim)
			if st := n.sim.Stats(); st.PowerActions != 2 || st.BootedFrom != isoURL || res.Evidence == "" {
				t.Errorf("resumed: %d power actions, booted from %q, evidence %q; want 2, the ISO, some", st.PowerActions, st.BootedFrom, res.Evidence)
			}
			if _, err := bmc.BootNode(context.Background(), n.target, isoURL, j.memJournal, append(fast(), evidence)...); err != nil {
				t.Fatal(err)
			}
			if st := n.sim.Stats(); st.PowerActions != 2 {
				t.Errorf("a finished node was powered again: %d power actions", st.PowerActions)
			}
		})
	}
}
