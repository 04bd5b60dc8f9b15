package upgrade

import (
	"strings"
	"testing"
	"time"
)

// The product's thresholds (oc adm upgrade status), each checked just under and at its limit.
func TestJudgeOperatorThresholds(t *testing.T) {
	th := DefaultThresholds()
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	op := func(name, typ, status string, ago time.Duration, version string) OperatorView {
		return OperatorView{Name: name, Version: version, Conditions: []Cond{{Type: typ, Status: status, Reason: "R", Message: "m", Since: now.Add(-ago)}}}
	}
	for _, tc := range []struct {
		name string
		o    OperatorView
		kind string // "" no trip
	}{
		{"unavailable 19m", op("dns", "Available", "False", 19*time.Minute, "4.17.10"), ""},
		{"unavailable 20m", op("dns", "Available", "False", 20*time.Minute, "4.17.10"), TripUnavailable},
		{"degraded 39m", op("dns", "Degraded", "True", 39*time.Minute, "4.17.10"), ""},
		{"degraded 40m", op("dns", "Degraded", "True", 40*time.Minute, "4.17.10"), TripDegraded},
		{"progressing 29m", op("dns", "Progressing", "True", 29*time.Minute, "4.17.10"), ""},
		{"progressing 30m", op("dns", "Progressing", "True", 30*time.Minute, "4.17.10"), TripProgressing},
		{"progressing 30m at target", op("dns", "Progressing", "True", 30*time.Minute, "4.18.5"), ""},
		{"machine-config progressing 89m", op("machine-config", "Progressing", "True", 89*time.Minute, "4.17.10"), ""},
		{"machine-config progressing 90m", op("machine-config", "Progressing", "True", 90*time.Minute, "4.17.10"), TripProgressing},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := judgeOperator(tc.o, "4.18.5", th, now)
			switch {
			case tc.kind == "" && got != nil:
				t.Errorf("tripped: %s", got.Sentence())
			case tc.kind != "" && (got == nil || got.Kind != tc.kind):
				t.Errorf("want %s, got %+v", tc.kind, got)
			case got != nil && !strings.HasPrefix(got.Sentence(), "ClusterOperator/"+tc.o.Name+": "):
				t.Errorf("sentence does not start with the object: %s", got.Sentence())
			}
		})
	}
	if s := th.Scale(60); s.Degraded != 40*time.Second || s.ProgressingMCO != 90*time.Second {
		t.Errorf("Scale(60): %+v", s)
	}
}

func TestJudgeClusterVersion(t *testing.T) {
	if tr := judgeCV([]Cond{{Type: "ReleaseAccepted", Status: "False", Reason: "RetrievePayload", Message: "signature verification failed"}}); tr == nil || tr.Kind != TripReleaseRejected {
		t.Errorf("ReleaseAccepted=False: %+v", tr)
	}
	if tr := judgeCV([]Cond{{Type: "Failing", Status: "True", Reason: "ClusterOperatorDegraded"}}); tr == nil || tr.Kind != TripFailing {
		t.Errorf("Failing=True: %+v", tr)
	}
	if tr := judgeCV([]Cond{{Type: "Failing", Status: "False"}, {Type: "ReleaseAccepted", Status: "True"}}); tr != nil {
		t.Errorf("healthy: %+v", tr)
	}
}

// The contract promises a rollback only within a z-stream.
func TestContract(t *testing.T) {
	minorHop := Contract(Hop{From: "4.17.10", To: "4.18.5"}, "")
	if !strings.Contains(minorHop, "no rollback; the CVO refuses to roll back across a minor") || strings.Contains(minorHop, "may be offered") {
		t.Errorf("minor hop:\n%s", minorHop)
	}
	z := Contract(Hop{From: "4.18.5", To: "4.18.9"}, "etcd/snapshot_4.18.5.db sha256:abc")
	for _, s := range []string{"rollback to the previous history entry (4.18.5) may be offered", "not supported", "etcd/snapshot_4.18.5.db sha256:abc", "only go forward"} {
		if !strings.Contains(z, s) {
			t.Errorf("z-stream contract lacks %q:\n%s", s, z)
		}
	}
	if ContractSum(z) == ContractSum(minorHop) {
		t.Error("different contracts hash alike")
	}
}
