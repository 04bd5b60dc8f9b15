package upgrade_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/upgrade"
)

// A plan file is read as `upgrade plan -o json > plan.json` writes it (JSON lines, the last the
// result holding the plan) or as the plan alone; a result without a plan (a refused plan) and
// anything without hops are refused with the command that writes a plan.
func TestParsePlan(t *testing.T) {
	plan := upgrade.Plan{From: "4.18.0", To: "4.20.1", Hops: []upgrade.Hop{
		{From: "4.18.0", To: "4.19.2", Payload: "quay.io/openshift-release-dev/ocp-release@sha256:19"},
		{From: "4.19.2", To: "4.20.1", Payload: "quay.io/openshift-release-dev/ocp-release@sha256:20", Edge: "conditional"}}}
	plain, _ := json.MarshalIndent(plan, "", "  ")
	line := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	result := line(map[string]any{"kind": "result", "command": "plan", "ok": true, "exitCode": 0, "data": plan})
	blocked := line(map[string]any{"kind": "result", "command": "plan", "ok": false, "exitCode": 2,
		"data": upgrade.Plan{From: plan.From, To: plan.To, Hops: plan.Hops, Blockers: []string{"x"}}})
	for name, in := range map[string]string{
		"plain":               string(plain),
		"result":              result + "\n",
		"after other lines":   `{"kind":"problem","message":"m"}` + "\n" + result + "\n\n",
		"blocked plan result": blocked,
	} {
		p, err := upgrade.ParsePlan([]byte(in))
		if err != nil || len(p.Hops) != 2 || p.Hops[1].Payload != plan.Hops[1].Payload || p.Hops[1].Edge != "conditional" {
			t.Errorf("%s: %v %+v", name, err, p)
		}
	}
	for name, in := range map[string]string{
		"refused":  line(map[string]any{"kind": "result", "command": "plan", "ok": false, "exitCode": 3, "error": "unknown target"}),
		"refusal":  line(map[string]any{"kind": "result", "command": "plan", "ok": false, "exitCode": 3, "data": map[string]any{"refusal": map[string]any{"reason": "graph"}}}),
		"no hops":  `{"from":"4.18.0","to":"4.18.0","hops":[]}`,
		"not json": "HOP FROM TO\n1 4.18.0 4.19.2\n",
		"empty":    "",
	} {
		_, err := upgrade.ParsePlan([]byte(in))
		if err == nil || !strings.Contains(err.Error(), "bootstrap upgrade plan --to VERSION -o json > plan.json") {
			t.Errorf("%s: %v, want a refusal naming the command", name, err)
		}
	}
}
