package stages

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/bootstrap-dev/bootstrap/internal/bmc"
	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
)

// A new attempt of the boot stage (one more node in the profile, a fixed BMC address, a new ISO)
// must not power-cycle nodes that are already booted and whose own inputs did not change. The
// runner scopes env.Steps.Done to the current attempt; bootJournal adds, per node, the steps of
// earlier attempts (env.Steps.Previous) when they were done with the node's current inputs:
//
//   - every per-node step record carries the node's input fingerprint (field nodeInputs);
//   - "node:<node>/inputs" records the node's fingerprint before an attempt first acts on the
//     node with inputs that differ from its latest record, so records older than that marker
//     are never carried to a node that has been acted on with other inputs since;
//   - a node's earlier records are carried only when its latest marker is its current
//     fingerprint and the record itself carries that fingerprint;
//   - "node:<node>/carried" records, once per attempt, that a node's earlier records were carried,
//     with the earlier power record when there is one, so status and the report of the current
//     attempt still show every node and the BMC action that booted it.
//
// A carried power step is a journaled power step: the node is not powered again. A replay gets
// no earlier records from the runner, so `bootstrap replay boot --node X` still forces X.

// bootStepInputs is the per-node marker step holding the node's input fingerprint.
const bootStepInputs = "inputs"

// bootStepCarried is the per-node step saying this attempt carried the node's earlier records.
const bootStepCarried = "carried"

// nodeInputsField is the field added to every per-node step record: the node's fingerprint.
const nodeInputsField = "nodeInputs"

// bootJournal is the bmc.Journal the boot stage hands to bmc.BootAll.
type bootJournal struct {
	steps pipeline.Steps
	fps   map[string]string // node → input fingerprint
	carry map[string]bool   // nodes whose earlier records with the same fingerprint count as done
}

type nodeStamp struct {
	NodeInputs string `json:"nodeInputs"`
}

// carriedRecord is the data of a node's carried step.
type carriedRecord struct {
	NodeInputs string `json:"nodeInputs"`
	// Power is the earlier attempt's power record (the BMC action that booted the node), if any.
	Power json.RawMessage `json:"power,omitempty"`
}

// newBootJournal decides, for each node, whether earlier attempts' records may be carried, and
// journals the inputs marker of nodes that start afresh. It returns the carried nodes.
func newBootJournal(steps pipeline.Steps, fps map[string]string, nodes []string) (*bootJournal, []string, error) {
	j := &bootJournal{steps: steps, fps: fps, carry: map[string]bool{}}
	var carried []string
	for _, n := range nodes {
		key := bmc.StepKey(n, bootStepInputs)
		var m nodeStamp
		switch {
		case steps.Done(key, &m) && m.NodeInputs == fps[n]:
			// This attempt already started the node afresh: its own records are the truth.
		case steps.Previous(key, &m) && m.NodeInputs == fps[n]:
			j.carry[n] = true
			carried = append(carried, n)
			if err := j.recordCarried(n); err != nil {
				return nil, nil, err
			}
		default:
			if err := steps.Record(key, nodeStamp{NodeInputs: fps[n]}); err != nil {
				return nil, nil, fmt.Errorf("boot: node %s: %w", n, err)
			}
		}
	}
	return j, carried, nil
}

// recordCarried journals, once per attempt, that node n's earlier records are carried.
func (j *bootJournal) recordCarried(n string) error {
	key := bmc.StepKey(n, bootStepCarried)
	if j.steps.Done(key, nil) {
		return nil
	}
	rec := carriedRecord{NodeInputs: j.fps[n]}
	var power json.RawMessage
	if j.Done(bmc.StepKey(n, bmc.StepPower), &power) {
		rec.Power = power
	}
	if err := j.steps.Record(key, rec); err != nil {
		return fmt.Errorf("boot: node %s: %w", n, err)
	}
	return nil
}

// Done implements bmc.Journal: the step is done in this attempt, or carried from an earlier one.
func (j *bootJournal) Done(key string, out any) bool {
	if j.steps.Done(key, out) {
		return true
	}
	node := keyNode(key)
	if !j.carry[node] {
		return false
	}
	var raw json.RawMessage
	var m nodeStamp
	if !j.steps.Previous(key, &raw) || json.Unmarshal(raw, &m) != nil || m.NodeInputs != j.fps[node] {
		return false
	}
	return out == nil || json.Unmarshal(raw, out) == nil
}

// Record implements bmc.Journal: the data is journaled with the node's fingerprint.
func (j *bootJournal) Record(key string, data any) error {
	fp, ok := j.fps[keyNode(key)]
	if !ok {
		return j.steps.Record(key, data)
	}
	raw, err := stampInputs(data, fp)
	if err != nil {
		return fmt.Errorf("record %s: %w", key, err)
	}
	return j.steps.Record(key, raw)
}

// stampInputs encodes data (a JSON object) with the nodeInputs field added first.
func stampInputs(data any, fp string) (json.RawMessage, error) {
	raw, err := json.Marshal(data)
	if err != nil {
		return nil, err
	}
	if len(raw) < 2 || raw[0] != '{' {
		return nil, fmt.Errorf("step data must be a JSON object, got %.20s", raw)
	}
	head, err := json.Marshal(nodeStamp{NodeInputs: fp})
	if err != nil {
		return nil, err
	}
	if string(raw) == "{}" {
		return head, nil
	}
	out := append(head[:len(head)-1:len(head)-1], ',')
	return append(out, raw[1:]...), nil
}

// keyNode returns the node of a bmc.StepKey ("node:<node>/<step>"), or "".
func keyNode(key string) string {
	rest, ok := strings.CutPrefix(key, "node:")
	if !ok {
		return ""
	}
	if i := strings.LastIndexByte(rest, '/'); i >= 0 {
		return rest[:i]
	}
	return ""
}

// journal returns the per-node journal for targets: earlier attempts' steps of nodes whose own
// inputs are unchanged count as done (see bootcarry.go).
func (Boot) journal(env *pipeline.Env, targets []bmc.Target) (*bootJournal, error) {
	in, err := readBootInputs(env)
	if err != nil {
		return nil, err
	}
	fps, err := nodeFingerprints(in)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(targets))
	for i, t := range targets {
		names[i] = t.Node
	}
	j, carried, err := newBootJournal(env.Steps, fps, names)
	if err != nil {
		return nil, err
	}
	for _, n := range carried {
		bootEmit(env, pipeline.Event{Kind: pipeline.Info, Node: n, Message: "node " + n +
			": inputs unchanged since an earlier attempt: its journaled steps are kept (no new power action once powered)"})
	}
	return j, nil
}

// nodeFingerprints hashes each node's own boot inputs.
func nodeFingerprints(in bootInputs) (map[string]string, error) {
	fps := make(map[string]string, len(in.Nodes))
	for _, n := range in.Nodes {
		fp, err := pipeline.Fingerprint(n)
		if err != nil {
			return nil, fmt.Errorf("node %s: %w", n.Name, err)
		}
		fps[n.Name] = fp
	}
	return fps, nil
}
