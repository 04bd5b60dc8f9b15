package bmc_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/bmc"
	"github.com/bootstrap-dev/bootstrap/internal/bmc/bmctest"
)

// TestOutcomePerProfile boots one powered-on node of each simulator profile twice: with the ISO
// served here (its fetch log is evidence) and served elsewhere (none). It asserts no run reports
// a boot it did not see — each is booted with evidence, "booted, unverified" with the reason, or
// failed with a remedy — and logs the measured table (profile, ISO, outcome, evidence, power
// actions); go test -v -run TestOutcomePerProfile prints it.
func TestOutcomePerProfile(t *testing.T) {
	iso := bmctest.NewISOServer()
	defer iso.Close()
	isoURL := iso.URL() + "/agent.x86_64.iso"
	p, _ := url.Parse(isoURL)
	fetchLog := bmc.WithBootEvidence(func(_ context.Context, _, _ string, since time.Time) error {
		if iso.ReadsSince(p.Path, since) == 0 {
			return errors.New("no read")
		}
		return nil
	})
	type want struct{ local, elsewhere string } // booted, unverified, or the error's sentinel text
	cases := []struct {
		name  string
		opts  bmctest.Options
		multi bool
		want  want
	}{
		{"idrac9-5.10", bmctest.Options{Firmware: "5.10.50.00"}, false, want{"booted", "unverified"}},
		{"idrac9-6.10", bmctest.Options{}, false, want{"booted", "unverified"}},
		{"generic", bmctest.Options{Profile: bmctest.ProfileGeneric}, false, want{"booted", "unverified"}},
		{"patch-only", bmctest.Options{Profile: bmctest.ProfilePatchOnly}, false, want{"booted", "unverified"}},
		{"multi-system", bmctest.Options{}, true, want{"booted", "unverified"}},
		{"noop-reset", bmctest.Options{NoopReset: true}, false, want{bmc.ErrNoReset.Error(), bmc.ErrNoReset.Error()}},
		{"noop-reset/generic", bmctest.Options{Profile: bmctest.ProfileGeneric, NoopReset: true}, false, want{bmc.ErrNoISORead.Error(), "unverified"}},
		{"ignored-once-override", bmctest.Options{IgnoreBootOnce: true}, false, want{bmc.ErrNoISORead.Error(), "unverified"}},
	}
	for _, name := range []string{"usbcd-only", "transfer-protocol-required", "credentials-required", "if-match-required", "async-insert", "first-slot-taken"} {
		cases = append(cases, struct {
			name  string
			opts  bmctest.Options
			multi bool
			want  want
		}{name, bmctest.Behaviours()[name], false, want{"booted", "unverified"}})
	}
	table := []string{"| profile | ISO | outcome | evidence or caveat | power actions |", "|---|---|---|---|---|"}
	for _, pc := range cases {
		for _, local := range []bool{true, false} {
			where, expect := "here", pc.want.local
			if !local {
				where, expect = "elsewhere", pc.want.elsewhere
			}
			t.Run(pc.name+"/"+where, func(t *testing.T) {
				o := pc.opts
				o.Power = "On"
				var sim *bmctest.BMC
				var target bmc.Target
				if pc.multi {
					vms := append([]bmctest.Member(nil), threeVMs...)
					vms[2].Power = "On"
					m := bmctest.NewMulti(bmctest.Options{Cert: sharedCert(t)}, vms)
					t.Cleanup(m.Close)
					sim, target = m.System(2), multiTarget(t, m, "vm-c", m.SystemURL(2), "")
				} else {
					sim, target = simNode(t, "n", o)
				}
				opts := append(fast(), bmc.WithConfirmTimeout(1500*time.Millisecond))
				if local {
					opts = append(opts, fetchLog)
				}
				res, err := bmc.BootNode(context.Background(), target, isoURL, newMemJournal(), opts...)
				idle(t, sim)
				outcome, detail := "booted", res.Evidence
				switch {
				case err != nil:
					var be *bmc.Error
					outcome, detail = "failed", err.Error()
					if !errors.As(err, &be) || be.Remedy() == "" {
						t.Errorf("a failure without a remedy: %v", err)
					} else {
						detail = fmt.Sprintf("%s (remedy: %s)", be.Err, be.Remedy())
					}
					if !strings.Contains(err.Error(), expect) {
						t.Errorf("err %v; want %q", err, expect)
					}
				case res.Unverified != "":
					outcome, detail = "booted, unverified", res.Unverified
					if expect != "unverified" {
						t.Errorf("unverified (%s); want %s", res.Unverified, expect)
					}
				default:
					if expect != "booted" || res.Evidence == "" {
						t.Errorf("booted with evidence %q; want %s", res.Evidence, expect)
					}
					if local && sim.Stats().BootedFrom != isoURL {
						t.Errorf("booted claimed, but the node booted from %q", sim.Stats().BootedFrom)
					}
				}
				table = append(table, fmt.Sprintf("| %s | %s | %s | %s | %d |", pc.name, where, outcome, clip(detail), sim.Stats().PowerActions))
			})
		}
	}
	t.Log("\n" + strings.Join(table, "\n"))
}

func clip(s string) string {
	if r := []rune(s); len(r) > 160 {
		return string(r[:160]) + "…"
	}
	return s
}
