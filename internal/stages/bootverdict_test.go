package stages

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/bmc"
	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
)

// TestNodeBoots: a node's verdict is its latest booted record; a later attempt that acts on the
// node again without a new booted record makes it "not booted"; a carried node keeps its verdict.
func TestNodeBoots(t *testing.T) {
	booted := func(n, ev, why string) pipeline.StepRecord {
		d, _ := json.Marshal(bmc.NodeResult{Node: n, Evidence: ev, Unverified: why})
		return pipeline.StepRecord{Key: pipeline.NodeStep(n, bmc.StepConfirm), Data: d}
	}
	step := func(n, act string) pipeline.StepRecord {
		return pipeline.StepRecord{Key: pipeline.NodeStep(n, act), Data: json.RawMessage(`{}`)}
	}
	att := func(stage string, n int, steps ...pipeline.StepRecord) pipeline.AttemptRecord {
		return pipeline.AttemptRecord{Stage: stage, Attempt: n, Steps: steps}
	}
	for _, tc := range []struct {
		name     string
		attempts []pipeline.AttemptRecord
		want     []NodeBoot
	}{
		{"evidence split, caveat kept", []pipeline.AttemptRecord{att(NameBoot, 1, step("a", "power"), booted("a", "x; y", ""), booted("b", "", "why"))},
			[]NodeBoot{{Node: "a", State: BootedVerified, Evidence: []string{"x", "y"}, Attempt: 1}, {Node: "b", State: BootedUnverified, Unverified: "why", Attempt: 1}}},
		{"both evidence and caveat", []pipeline.AttemptRecord{att(NameBoot, 1, booted("a", "reset seen", "served elsewhere"))},
			[]NodeBoot{{Node: "a", State: BootedUnverified, Evidence: []string{"reset seen"}, Unverified: "served elsewhere", Attempt: 1}}},
		{"carried keeps the verdict", []pipeline.AttemptRecord{att(NameBoot, 1, booted("a", "", "why")), att(NameBoot, 2, step("a", bootStepCarried))},
			[]NodeBoot{{Node: "a", State: BootedUnverified, Unverified: "why", Attempt: 1}}},
		{"recheck without a new boot", []pipeline.AttemptRecord{att(NameBoot, 1, booted("a", "e", "")), att(NameBoot, 2, step("a", bootStepRecheck), step("a", "power"))},
			[]NodeBoot{{Node: "a", State: BootNotConfirmed, Attempt: 2}}},
		{"recheck then booted", []pipeline.AttemptRecord{att(NameBoot, 1, booted("a", "", "why")), att(NameBoot, 2, step("a", bootStepRecheck), booted("a", "e", ""))},
			[]NodeBoot{{Node: "a", State: BootedVerified, Evidence: []string{"e"}, Attempt: 2}}},
		{"failed before booted", []pipeline.AttemptRecord{att(NameBoot, 1, step("a", "media"))},
			[]NodeBoot{{Node: "a", State: BootNotConfirmed, Attempt: 1}}},
		{"other stages ignored", []pipeline.AttemptRecord{att(NameInstall, 1, booted("a", "e", ""))}, []NodeBoot{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := NodeBoots(pipeline.History{Attempts: tc.attempts})
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
	if got := (NodeBoot{State: BootedUnverified, Unverified: "why"}).Caveat(); got != "booted, unverified: why" {
		t.Errorf("caveat %q", got)
	}
}
