package bmc_test

import (
	"context"
	"net"
	"strings"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/bmc"
	"github.com/bootstrap-dev/bootstrap/internal/bmc/bmctest"
	"github.com/bootstrap-dev/bootstrap/internal/finding"
)

func closedAddress(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "https://" + addr
}

func TestPreflight(t *testing.T) {
	url := "http://10.0.0.1:8080/agent.x86_64.iso"
	cases := []struct {
		name   string
		opts   bmctest.Options
		target func(*testing.T, bmc.Target) bmc.Target
		expect bmc.Expect
		setup  func(*bmctest.BMC)
		check  string
		status finding.Status
		want   string // in message or remedy
	}{
		{name: "healthy node passes", check: bmc.CheckMAC, status: finding.Pass},
		{name: "wrong password", check: bmc.CheckAuth, status: finding.Fail, want: "password",
			target: func(_ *testing.T, tg bmc.Target) bmc.Target {
				tg.Password = func() (string, error) { return "nope", nil }
				return tg
			}},
		{name: "unreachable BMC", check: bmc.CheckReachable, status: finding.Fail, want: "bmc.address",
			target: func(t *testing.T, tg bmc.Target) bmc.Target { tg.Address = closedAddress(t); return tg }},
		{name: "untrusted certificate", check: bmc.CheckTLS, status: finding.Fail, want: "caFile",
			target: func(_ *testing.T, tg bmc.Target) bmc.Target { tg.CAFile = ""; return tg }},
		{name: "insecure is a warning", check: bmc.CheckTLS, status: finding.Warn, want: "insecure",
			target: func(_ *testing.T, tg bmc.Target) bmc.Target { tg.CAFile, tg.Insecure = "", true; return tg }},
		{name: "wrong MAC: swapped cable", check: bmc.CheckMAC, status: finding.Fail, want: "swapped",
			expect: bmc.Expect{BootMAC: "B0-7B-25-00-00-99", ISOURL: url}},
		{name: "old firmware warns", opts: bmctest.Options{Firmware: "4.10.10.10"}, check: bmc.CheckFirmware, status: finding.Warn, want: bmc.FirmwareFloor},
		{name: "stale media warns", opts: bmctest.Options{StaleMedia: "http://old/x.iso"}, check: bmc.CheckStaleMedia, status: finding.Warn, want: "http://old/x.iso"},
		{name: "ISO URL too long", check: bmc.CheckISOURL, status: finding.Fail, want: "iso.baseURL",
			expect: bmc.Expect{BootMAC: testMAC, ISOURL: url + "?" + strings.Repeat("a", 250)}},
		{name: "stuck job queue", opts: bmctest.Options{StuckJobs: 2}, check: bmc.CheckJobQueue, status: finding.Warn, want: "JID_CLEARALL"},
		{name: "session table nearly full", setup: func(b *bmctest.BMC) { b.FillSessions(7) }, check: bmc.CheckSessions, status: finding.Warn, want: "sessions"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sim, target := simNode(t, "rack2-node4", tc.opts)
			if tc.target != nil {
				target = tc.target(t, target)
			}
			if tc.setup != nil {
				tc.setup(sim)
			}
			exp := tc.expect
			if exp.ISOURL == "" {
				exp = bmc.Expect{BootMAC: testMAC, MACs: []string{"B0:7B:25:DE:1A:02"}, ISOURL: url}
			}
			before := sim.Stats()
			fs := bmc.Preflight(context.Background(), bmc.PreflightNode{Target: target, Expect: exp}, fast()...)
			var got *finding.Finding
			for i := range fs {
				if fs[i].Node != "rack2-node4" {
					t.Errorf("finding without the node name: %+v", fs[i])
				}
				if fs[i].Check == tc.check {
					got = &fs[i]
				}
				if tc.status == finding.Pass && fs[i].Status == finding.Fail {
					t.Errorf("unexpected failure: %+v", fs[i])
				}
				if fs[i].Status != finding.Pass && fs[i].Remedy == "" {
					t.Errorf("failure without a remedy: %+v", fs[i])
				}
			}
			if got == nil {
				t.Fatalf("no %s finding in %+v", tc.check, fs)
			}
			if got.Status != tc.status || !strings.Contains(got.Message+" "+got.Remedy, tc.want) {
				t.Errorf("%s: %s %q remedy %q; want %s mentioning %q", tc.check, got.Status, got.Message, got.Remedy, tc.status, tc.want)
			}
			after := sim.Stats()
			if after.Writes != before.Writes || after.PowerActions != 0 || after.Inserted != before.Inserted || after.ActiveSessions != before.ActiveSessions {
				t.Errorf("preflight changed the BMC: writes %d→%d, power actions %d, media %q→%q, sessions %d→%d",
					before.Writes, after.Writes, after.PowerActions, before.Inserted, after.Inserted, before.ActiveSessions, after.ActiveSessions)
			}
		})
	}
}

// TestPreflightAllNamesEachNode: three nodes, one bad each way; every bad one is named.
func TestPreflightAllNamesEachNode(t *testing.T) {
	simA, a := simNode(t, "good", bmctest.Options{})
	simB, b := simNode(t, "badpass", bmctest.Options{})
	simC, c := simNode(t, "swapped", bmctest.Options{MACs: []string{"aa:bb:cc:dd:ee:ff"}})
	b.Password = func() (string, error) { return "x", nil }
	exp := bmc.Expect{BootMAC: testMAC, ISOURL: "http://10.0.0.1/agent.x86_64.iso"}
	fs, err := bmc.PreflightAll(context.Background(), []bmc.PreflightNode{{a, exp}, {b, exp}, {c, exp}}, fast()...)
	if err != nil {
		t.Fatal(err)
	}
	failed := map[string]string{}
	for _, f := range fs {
		if f.Status == finding.Fail {
			failed[f.Node] = f.Check
		}
	}
	want := map[string]string{"badpass": bmc.CheckAuth, "swapped": bmc.CheckMAC}
	if len(failed) != 2 || failed["badpass"] != want["badpass"] || failed["swapped"] != want["swapped"] {
		t.Errorf("failed checks %v, want %v", failed, want)
	}
	for _, s := range []*bmctest.BMC{simA, simB, simC} {
		if st := s.Stats(); st.Writes != 0 || st.PowerActions != 0 {
			t.Errorf("preflight wrote to a BMC: %+v", st)
		}
	}
}
