package bmc_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/bmc"
	"github.com/bootstrap-dev/bootstrap/internal/bmc/bmctest"
	"github.com/bootstrap-dev/bootstrap/internal/finding"
)

// profileCase is one kind of BMC the flow must boot: both iDRAC9 media layouts, a generic
// Redfish service that keeps every override Continuous and has no SessionService, and one whose
// slots take media only by PATCH.
type profileCase struct {
	name     string
	opts     bmctest.Options
	kind     string
	layout   bmc.Layout
	method   string
	basic    bool // basic auth (no SessionService)
	cdSlot   string
	staleIDs []string // slots the stale media sits in
}

func profileCases() []profileCase {
	return []profileCase{
		{name: "idrac9-5.10", opts: bmctest.Options{Firmware: "5.10.50.00"}, kind: "Dell iDRAC9", layout: bmc.LayoutManager, method: bmc.MethodStandard, cdSlot: "CD", staleIDs: []string{"RemovableDisk", "CD"}},
		{name: "idrac9-6.10", opts: bmctest.Options{Firmware: "6.10.30.00"}, kind: "Dell iDRAC9", layout: bmc.LayoutSystem, method: bmc.MethodStandard, cdSlot: "1", staleIDs: []string{"1", "2"}},
		{name: "generic", opts: bmctest.Options{Profile: bmctest.ProfileGeneric}, kind: "generic Redfish", layout: bmc.LayoutManager, method: bmc.MethodContinuous, basic: true, cdSlot: "Cd", staleIDs: []string{"Cd", "Floppy"}},
		{name: "patch-only", opts: bmctest.Options{Profile: bmctest.ProfilePatchOnly}, kind: "generic Redfish", layout: bmc.LayoutSystem, method: bmc.MethodStandard, cdSlot: "CD1", staleIDs: []string{"CD1", "USB1"}},
	}
}

// TestBootNodeProfiles boots one node of each profile, from power off and on, with stale media
// in every slot: the stale media leave every slot (read back), the ISO goes into the CD slot, one
// power action, the node boots the ISO; on the generic BMC the override is persistent and the
// result says so.
func TestBootNodeProfiles(t *testing.T) {
	iso := bmctest.NewISOServer()
	defer iso.Close()
	url := iso.URL() + "/agent.x86_64.iso"
	for _, pc := range profileCases() {
		for _, power := range []string{"Off", "On"} {
			t.Run(pc.name+"/"+power, func(t *testing.T) {
				o := pc.opts
				o.Power, o.StaleMedia = power, iso.URL()+"/old.iso"
				sim, target := simNode(t, "n-"+pc.name, o)
				before := sim.Stats()
				for _, id := range pc.staleIDs {
					if before.Slots[id] == "" {
						t.Fatalf("simulator: slot %s holds no stale media: %v", id, before.Slots)
					}
				}
				res, err := bmc.BootNode(context.Background(), target, url, newMemJournal(), fast()...)
				if err != nil {
					t.Fatalf("BootNode: %v", err)
				}
				if res.Kind != pc.kind || res.Layout != pc.layout || res.Method != pc.method || res.BasicAuth != pc.basic {
					t.Errorf("result kind=%q layout=%s method=%s basic=%t; want %q %s %s %t", res.Kind, res.Layout, res.Method, res.BasicAuth, pc.kind, pc.layout, pc.method, pc.basic)
				}
				if res.Persistent != (pc.method == bmc.MethodContinuous) {
					t.Errorf("persistent override %t with method %s", res.Persistent, res.Method)
				}
				// With a persistent override from power On, nothing on the BMC shows the restart
				// done (no fetch-log evidence here): wait for the simulator's boot.
				idle(t, sim)
				st := sim.Stats()
				if st.PowerActions != 1 || st.BootedFrom != url || st.Boots != 1 {
					t.Errorf("simulator: power actions %d, boots %d, booted from %q; want 1, 1, the ISO", st.PowerActions, st.Boots, st.BootedFrom)
				}
				if len(st.Slots) != 1 || st.Slots[pc.cdSlot] != url {
					t.Errorf("slots after boot %v; want only %s=%s", st.Slots, pc.cdSlot, url)
				}
				if pc.method == bmc.MethodContinuous && st.Override != "Cd/Continuous" {
					t.Errorf("override %s; want Cd/Continuous until install takes it off", st.Override)
				}
			})
		}
	}
}

// TestBootNodeMediaCannotBeRemoved: a slot with no EjectMedia action that refuses PATCH holds
// stale media. Preflight fails naming the slot; the boot stops before any power action with an
// error naming the slot and the fix.
func TestBootNodeMediaCannotBeRemoved(t *testing.T) {
	iso := bmctest.NewISOServer()
	defer iso.Close()
	url := iso.URL() + "/agent.x86_64.iso"
	sim, target := simNode(t, "stuck", bmctest.Options{Profile: bmctest.ProfilePatchOnly, NoMediaPatch: true, StaleMedia: iso.URL() + "/old.iso"})
	fs := bmc.Preflight(context.Background(), bmc.PreflightNode{Target: target, Expect: bmc.Expect{ISOURL: url, BootMAC: testMAC}}, fast()...)
	got := map[string]finding.Finding{}
	for _, f := range fs {
		got[f.Check] = f
	}
	if f := got[bmc.CheckStaleMedia]; f.Status != finding.Fail || !strings.Contains(f.Message, "/USB1=") || f.Remedy == "" {
		t.Errorf("stale media finding %+v; want FAIL naming slot USB1 with a remedy", f)
	}
	if f := got[bmc.CheckMedia]; f.Status != finding.Fail || !strings.Contains(f.Message, "CD1") {
		t.Errorf("media finding %+v; want FAIL: the CD slot takes no media", f)
	}
	_, err := bmc.BootNode(context.Background(), target, url, newMemJournal(), fast()...)
	var be *bmc.Error
	if !errors.As(err, &be) || be.Op != bmc.StepMedia || !strings.Contains(err.Error(), "CD1") || be.Remedy() == "" {
		t.Fatalf("err %v; want a media error naming slot CD1 with a remedy", err)
	}
	if strings.Contains(be.Remedy(), "iDRAC") {
		t.Errorf("remedy for a non-Dell BMC names the iDRAC: %s", be.Remedy())
	}
	if st := sim.Stats(); st.PowerActions != 0 {
		t.Errorf("%d power actions although the media could not be set", st.PowerActions)
	}
}

// TestPreflightProfiles: preflight reports what each BMC offers: the boot-once support it lists
// (or not), how media go in, the session service.
func TestPreflightProfiles(t *testing.T) {
	iso := bmctest.NewISOServer()
	defer iso.Close()
	url := iso.URL() + "/agent.x86_64.iso"
	cases := []struct {
		name string
		opts bmctest.Options
		want map[string]string // check → "status:text"
	}{
		{"idrac9-5.10", bmctest.Options{Firmware: "5.10.50.00"}, map[string]string{
			bmc.CheckBootOnce: "pass:allows Once", bmc.CheckMedia: "pass:InsertMedia action", bmc.CheckFirmware: "pass:iDRAC firmware 5.10", bmc.CheckJobQueue: "pass:empty"}},
		{"generic", bmctest.Options{Profile: bmctest.ProfileGeneric}, map[string]string{
			bmc.CheckBootOnce: "pass:does not list", bmc.CheckSessions: "pass:no SessionService", bmc.CheckFirmware: "pass:generic Redfish", bmc.CheckMedia: "pass:InsertMedia action"}},
		{"generic-no-once", bmctest.Options{Profile: bmctest.ProfileGeneric, BootEnabledAllowed: []string{"Continuous", "Disabled"}}, map[string]string{
			bmc.CheckBootOnce: "warn:persistent Cd override"}},
		{"patch-only", bmctest.Options{Profile: bmctest.ProfilePatchOnly, StaleMedia: iso.URL() + "/old.iso"}, map[string]string{
			bmc.CheckMedia: "pass:PATCH of Image/Inserted", bmc.CheckStaleMedia: "warn:ejects it", bmc.CheckBootOnce: "pass:allows Once"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, target := simNode(t, tc.name, tc.opts)
			fs := bmc.Preflight(context.Background(), bmc.PreflightNode{Target: target, Expect: bmc.Expect{ISOURL: url, BootMAC: testMAC}}, fast()...)
			got := map[string]finding.Finding{}
			for _, f := range fs {
				got[f.Check] = f
				if f.Status != finding.Pass && tc.opts.Profile != "" && strings.Contains(f.Remedy, "iDRAC") {
					t.Errorf("%s: remedy for a non-Dell BMC names the iDRAC: %s", f.Check, f.Remedy)
				}
			}
			for check, want := range tc.want {
				status, text, _ := strings.Cut(want, ":")
				f := got[check]
				if f.Status.String() != status || !strings.Contains(f.Message, text) {
					t.Errorf("%s: %s %q; want %s mentioning %q", check, f.Status, f.Message, status, text)
				}
			}
			if _, ok := got[bmc.CheckJobQueue]; ok && tc.opts.Profile != "" {
				t.Errorf("a non-Dell BMC got the iDRAC job-queue check")
			}
		})
	}
}
