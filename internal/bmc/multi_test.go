package bmc_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/bmc"
	"github.com/bootstrap-dev/bootstrap/internal/bmc/bmctest"
	"github.com/bootstrap-dev/bootstrap/internal/finding"
)

// threeVMs is sushy-tools driving three libvirt domains, as in the Metal3 development lab.
var threeVMs = []bmctest.Member{
	{ID: "5b2e0f1c-0000-4e0b-9a51-00000000000a", Name: "vm-a", MACs: []string{"52:54:00:00:00:0a"}, Power: "On"},
	{ID: "5b2e0f1c-0000-4e0b-9a51-00000000000b", Name: "vm-b", MACs: []string{"52:54:00:00:00:0b"}, Power: "On"},
	{ID: "5b2e0f1c-0000-4e0b-9a51-00000000000c", Name: "vm-c", MACs: []string{"52:54:00:00:00:0c"}},
}

func multiTarget(t *testing.T, m *bmctest.Multi, node, addr, bootMAC string) bmc.Target {
	t.Helper()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := m.WriteCA(ca); err != nil {
		t.Fatal(err)
	}
	return bmc.Target{Node: node, Address: addr, Username: "root", CAFile: ca, BootMAC: bootMAC,
		Password: func() (string, error) { return "calvin", nil }}
}

// TestMultiSystemActsOnItsOwnSystem: a node addressed as .../Systems/<id of vm-c> on a service
// with three systems is booted on vm-c — media under vm-c's own manager, override, power — and
// the other two systems receive no write at all (the simulator records requests per system).
func TestMultiSystemActsOnItsOwnSystem(t *testing.T) {
	iso := bmctest.NewISOServer()
	defer iso.Close()
	url := iso.URL() + "/agent.x86_64.iso"
	m := bmctest.NewMulti(bmctest.Options{Cert: sharedCert(t), StaleMedia: iso.URL() + "/theirs.iso"}, threeVMs)
	defer m.Close()
	target := multiTarget(t, m, "vm-c", m.SystemURL(2), "52:54:00:00:00:0c")
	res, err := bmc.BootNode(context.Background(), target, url, newMemJournal(), fast()...)
	if err != nil {
		t.Fatalf("BootNode: %v", err)
	}
	if res.SystemName != "vm-c" || !strings.HasSuffix(res.System, threeVMs[2].ID) {
		t.Errorf("result names system %s (%s); want vm-c", res.System, res.SystemName)
	}
	idle(t, m.System(2))
	if st := m.System(2).Stats(); st.PowerActions != 1 || st.BootedFrom != url || st.Slots["Cd"] != url {
		t.Errorf("vm-c: %d power actions, booted from %q, slots %v; want 1, the ISO, Cd=ISO", st.PowerActions, st.BootedFrom, st.Slots)
	}
	for i := 0; i < 2; i++ {
		st := m.System(i).Stats()
		if w := m.Writes(i); w != 0 || st.PowerActions != 0 || st.Slots["Cd"] != iso.URL()+"/theirs.iso" {
			t.Errorf("%s was touched: %d writes (%v), %d power actions, slots %v", threeVMs[i].Name, w, m.Requests(i), st.PowerActions, st.Slots)
		}
	}
	// VerifyBooted and TakeOverrideOff go to the same system.
	if err := bmc.VerifyBooted(context.Background(), target, url, fast()...); err != nil {
		t.Errorf("VerifyBooted: %v", err)
	}
	if _, err := bmc.TakeOverrideOff(context.Background(), target, url, true, fast()...); err != nil {
		t.Errorf("TakeOverrideOff: %v", err)
	}
	if st := m.System(2).Stats(); st.Override == "Cd/Continuous" || st.Slots["Cd"] != "" {
		t.Errorf("vm-c after handover: override %s, slots %v", st.Override, st.Slots)
	}
	for i := 0; i < 2; i++ {
		if w := m.Writes(i); w != 0 {
			t.Errorf("%s received %d writes: %v", threeVMs[i].Name, w, m.Requests(i))
		}
	}
}

// TestMultiSystemRefusesWithoutASystem: the service address alone, or a System it does not
// list, is refused before any write; the error lists each system's id, name and MACs and names
// the one that reports the node's bootMAC.
func TestMultiSystemRefusesWithoutASystem(t *testing.T) {
	iso := bmctest.NewISOServer()
	defer iso.Close()
	m := bmctest.NewMulti(bmctest.Options{Cert: sharedCert(t)}, threeVMs)
	defer m.Close()
	for _, tc := range []struct {
		name, addr string
		want       error
	}{
		{"host only", m.URL(), bmc.ErrManySystems},
		{"unknown system", m.URL() + "/redfish/v1/Systems/vm-z", bmc.ErrNoSuchSystem},
	} {
		t.Run(tc.name, func(t *testing.T) {
			target := multiTarget(t, m, "vm-b", tc.addr, "52:54:00:00:00:0B")
			_, err := bmc.BootNode(context.Background(), target, iso.URL()+"/agent.x86_64.iso", newMemJournal(), fast()...)
			var be *bmc.Error
			if !errors.Is(err, tc.want) || !errors.As(err, &be) {
				t.Fatalf("err = %v; want %v", err, tc.want)
			}
			for _, vm := range threeVMs {
				if !strings.Contains(err.Error(), vm.ID) || !strings.Contains(err.Error(), `"`+vm.Name+`"`) || !strings.Contains(err.Error(), vm.MACs[0]) {
					t.Errorf("error does not list %s (id, name, MAC): %v", vm.Name, err)
				}
			}
			if want := "bootMAC 52:54:00:00:00:0b is on system " + threeVMs[1].ID + " (vm-b): set bmc.address to " + m.SystemURL(1); !strings.Contains(be.Remedy(), want) {
				t.Errorf("remedy %q; want it to contain %q", be.Remedy(), want)
			}
			for i := range threeVMs {
				if w := m.Writes(i); w != 0 {
					t.Errorf("%s received %d writes before the refusal", threeVMs[i].Name, w)
				}
			}
			fs := bmc.Preflight(context.Background(), bmc.PreflightNode{Target: target}, fast()...)
			if f := findingOf(fs, bmc.CheckSystem); f.Status != finding.Fail || !strings.Contains(f.Remedy, m.SystemURL(1)) {
				t.Errorf("preflight %s: %+v", bmc.CheckSystem, f)
			}
		})
	}
	fs := bmc.Preflight(context.Background(), bmc.PreflightNode{Target: multiTarget(t, m, "vm-a", m.SystemURL(0), ""),
		Expect: bmc.Expect{BootMAC: threeVMs[0].MACs[0]}}, fast()...)
	if f := findingOf(fs, bmc.CheckSystem); f.Status != finding.Pass || !strings.Contains(f.Message, "vm-a") {
		t.Errorf("preflight of an addressed system: %+v", f)
	}
	if f := findingOf(fs, bmc.CheckMAC); f.Status != finding.Pass {
		t.Errorf("preflight MAC check of vm-a: %+v", f)
	}
}

func findingOf(fs []finding.Finding, check string) finding.Finding {
	for _, f := range fs {
		if f.Check == check {
			return f
		}
	}
	return finding.Finding{}
}
