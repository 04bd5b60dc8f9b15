package report

import (
	"encoding/json"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/bmc"
)

// TestPersistentNodes: the report names the nodes booted with a persistent override, why, and
// whether the install stage handed them over to their disk.
func TestPersistentNodes(t *testing.T) {
	data := func(v any) json.RawMessage { b, _ := json.Marshal(v); return b }
	nodes := []NodeActions{
		{Node: "m0", Actions: []Action{{Action: bmc.StepBootOverride, Data: data(map[string]string{"method": bmc.MethodStandard})}}},
		{Node: "g1", Actions: []Action{
			{Action: bmc.StepBootOverride, Data: data(map[string]string{"method": bmc.MethodContinuous, "reason": "the BMC reads back Continuous after being told Once"})},
			{Action: "override-off", Data: data(map[string]any{"override": "None/Continuous"})},
			{Action: bmc.StepHandover, Data: data(map[string]any{"override": "None/Continuous", "ejected": []string{"/redfish/v1/Managers/1/VirtualMedia/Cd"}})},
		}},
		{Node: "g2", Actions: []Action{{Action: bmc.StepBootOverride, Data: data(map[string]string{"method": bmc.MethodContinuous, "reason": "r"})}}},
	}
	got := persistentNodes(nodes)
	if len(got) != 2 || got[0].Node != "g1" || got[1].Node != "g2" {
		t.Fatalf("persistent nodes %+v; want g1 and g2", got)
	}
	if got[0].HandedOver != "override None/Continuous, ISO ejected from /redfish/v1/Managers/1/VirtualMedia/Cd" || got[0].Reason == "" {
		t.Errorf("g1: %+v", got[0])
	}
	if got[1].HandedOver != "" {
		t.Errorf("g2 was never handed over, the report says %q", got[1].HandedOver)
	}
}
