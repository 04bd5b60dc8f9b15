package bmc

import (
	"strings"
	"testing"
)

// TestEvidenceRules is one case per evidence rule of evidence.go (and the cases that must not
// count as evidence).
func TestEvidenceRules(t *testing.T) {
	const t0, t1 = "2026-12-06T10:00:00Z", "2026-12-06T12:00:00Z"
	for _, tc := range []struct {
		rule       string
		o          observation
		evidence   string // a substring of the joined evidence; "" for none
		unverified string // a substring of the caveat; "" for none
		noReset    bool
	}{
		{"R1 power Off→On", observation{Action: "On", From: "Off", PowerAfter: "On"}, "power Off→On", "served elsewhere", false},
		{"R1 not from a restart that stayed On", observation{Action: "ForceRestart", From: "On", PowerAfter: "On"}, "", "no sign of a reboot", false},
		{"R2 LastResetTime advanced", observation{Action: "ForceRestart", From: "On", PowerAfter: "On", ResetBefore: t0, ResetAfter: t1}, "LastResetTime advanced", "served elsewhere", false},
		{"R3 BootProgress advanced", observation{Action: "ForceRestart", From: "On", PowerAfter: "On", ProgressBefore: t0, ProgressAfter: t1}, "BootProgress advanced", "served elsewhere", false},
		{"R4 one-time override consumed", observation{Action: "ForceRestart", From: "On", PowerAfter: "On", Once: true, Consumed: true}, "override consumed", "served elsewhere", false},
		{"R5 ISO read with a fetch log", observation{Action: "ForceRestart", From: "On", PowerAfter: "On", Once: true, Consumed: true, FetchLog: true, ISORead: true}, "read its ISO", "", false},
		{"R6 served elsewhere, reboot seen", observation{Action: "On", From: "Off", PowerAfter: "On", FetchLog: false}, "power Off→On", "no fetch log shows the node read it", false},
		{"R7 LastResetTime unchanged: no reset", observation{Action: "ForceRestart", From: "On", PowerAfter: "On", ResetBefore: t0, ResetAfter: t0}, "", "", true},
		{"R7 one-time override still armed: no reset", observation{Action: "ForceRestart", From: "On", PowerAfter: "On", Once: true}, "", "", true},
		{"R7 nothing reported: unverified", observation{Action: "ForceRestart", From: "On", PowerAfter: "On"}, "", "persistent override is never consumed", false},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			v := judge(tc.o)
			ev := strings.Join(v.Evidence, "; ")
			if (tc.evidence == "") != (ev == "") || !strings.Contains(ev, tc.evidence) {
				t.Errorf("evidence %q; want %q", ev, tc.evidence)
			}
			if (tc.unverified == "") != (v.Unverified == "") || !strings.Contains(v.Unverified, tc.unverified) {
				t.Errorf("unverified %q; want %q", v.Unverified, tc.unverified)
			}
			if v.NoReset != tc.noReset {
				t.Errorf("no reset %t; want %t", v.NoReset, tc.noReset)
			}
		})
	}
}
