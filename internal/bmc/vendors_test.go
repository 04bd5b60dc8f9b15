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
	"github.com/bootstrap-dev/bootstrap/internal/finding"
)

// TestVendorBehaviours boots a node of every vendor behaviour the simulator reproduces, from
// power Off and On, with media another party left behind (its URL carrying credentials): each
// boots its ISO with one power action (or fails with a remedy where failing is right), the
// foreign media is journaled with its URL redacted before it is ejected, and a BMC that refused
// the first CD slot has the ISO in the next.
func TestVendorBehaviours(t *testing.T) {
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
	foreign := strings.Replace(iso.URL(), "http://", "http://support:s3cr3t-pw@", 1) + "/theirs.iso?token=abc123"
	fails := map[string]error{"noop-reset": bmc.ErrNoReset, "ignored-once-override": bmc.ErrNoISORead}
	for name, o := range bmctest.Behaviours() {
		for _, power := range []string{"Off", "On"} {
			t.Run(name+"/"+power, func(t *testing.T) {
				o.Power, o.StaleMedia = power, foreign
				if name == "first-slot-taken" {
					o.StaleMedia = "" // its first slot is held, not filled
				}
				sim, target := simNode(t, "n", o)
				j := newMemJournal()
				res, err := bmc.BootNode(context.Background(), target, isoURL, j, append(fast(), bmc.WithConfirmTimeout(2*time.Second), fetchLog)...)
				idle(t, sim)
				st := sim.Stats()
				if want := fails[name]; want != nil {
					var be *bmc.Error
					if !errors.Is(err, want) || !errors.As(err, &be) || be.Remedy() == "" {
						t.Fatalf("err = %v; want %v with a remedy", err, want)
					}
					// Media and override were set: the words say so and name the one command.
					if r := be.Remedy(); !strings.Contains(r, "left armed: the ISO inserted in slot") || !strings.Contains(r, "bootstrap replay boot --node n") {
						t.Errorf("remedy %q does not say the server is left armed and how to finish", r)
					}
					return
				}
				if err != nil {
					t.Fatalf("BootNode: %v", err)
				}
				if st.PowerActions != 1 || st.BootedFrom != isoURL || res.Evidence == "" {
					t.Errorf("%d power actions, booted from %q, evidence %q; want 1, the ISO, some", st.PowerActions, st.BootedFrom, res.Evidence)
				}
				for id, img := range st.Slots {
					if img != isoURL {
						t.Errorf("slot %s still holds %s", id, img)
					}
				}
				if o.StaleMedia != "" {
					found := false
					for k, raw := range j.m {
						if strings.Contains(k, "/ejected-") {
							found = true
							if s := string(raw); strings.Contains(s, "s3cr3t-pw") || strings.Contains(s, "abc123") || !strings.Contains(s, "theirs.iso") {
								t.Errorf("journaled eject %s: %s; want the image named without its credentials", k, s)
							}
						}
					}
					if !found {
						t.Error("the foreign media was ejected without a journal entry")
					}
				}
				if name == "first-slot-taken" {
					var rec map[string]string
					j.Done(bmc.StepKey("n", bmc.StepMedia), &rec)
					if !strings.HasSuffix(rec["slot"], "/CD2") || !strings.Contains(rec["passedOver"], "CD1") {
						b, _ := json.Marshal(rec)
						t.Errorf("media step %s; want CD2, CD1 passed over", b)
					}
				}
			})
		}
	}
}

// TestVendorHintChecked: bmc.vendor is a checked hint: a BMC of another kind than it says is a
// preflight warning naming both (discovery decides), a matching or absent hint passes.
func TestVendorHintChecked(t *testing.T) {
	_, target := simNode(t, "n", bmctest.Options{Profile: bmctest.ProfileGeneric})
	for hint, want := range map[string]finding.Status{"dell": finding.Warn, "generic": finding.Pass, "": finding.Pass} {
		fs := bmc.Preflight(context.Background(), bmc.PreflightNode{Target: target, Expect: bmc.Expect{Vendor: hint}}, fast()...)
		f := findingOf(fs, bmc.CheckFirmware)
		if f.Status != want || (want == finding.Warn && !strings.Contains(f.Message, `bmc.vendor says dell but the BMC reports Manufacturer "QEMU"`)) {
			t.Errorf("hint %q: %+v; want %s", hint, f, want)
		}
	}
}

// TestNoResetAdviceChangesTheOutcome follows the words of a reset that did nothing: power-cycle
// the server by hand, then the one command named (a replay: a fresh attempt). The replay boots
// the node with evidence; running the failed attempt again unchanged would not have.
func TestNoResetAdviceChangesTheOutcome(t *testing.T) {
	iso := bmctest.NewISOServer()
	defer iso.Close()
	isoURL := iso.URL() + "/agent.x86_64.iso"
	o := bmctest.Behaviours()["noop-reset"]
	o.Power = "On"
	sim, target := simNode(t, "n", o)
	opts := append(fast(), bmc.WithConfirmTimeout(time.Second))
	_, err := bmc.BootNode(context.Background(), target, isoURL, newMemJournal(), opts...)
	var be *bmc.Error
	if !errors.Is(err, bmc.ErrNoReset) || !errors.As(err, &be) {
		t.Fatalf("err = %v; want ErrNoReset", err)
	}
	if r := be.Remedy(); !strings.Contains(r, "power-cycle it") || !strings.Contains(r, "bootstrap replay boot --node n") {
		t.Fatalf("remedy %q names neither the hand power-cycle nor the replay", r)
	}
	sim.PowerCycleByHand()
	idle(t, sim)
	res, err := bmc.BootNode(context.Background(), target, isoURL, newMemJournal(), opts...)
	if err != nil {
		t.Fatalf("the replay the advice names: %v", err)
	}
	idle(t, sim)
	if st := sim.Stats(); st.BootedFrom != isoURL || !strings.Contains(res.Evidence, "LastResetTime advanced") {
		t.Errorf("after the advice: booted from %q, evidence %q", st.BootedFrom, res.Evidence)
	}
}
