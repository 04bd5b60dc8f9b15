package stages

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/bootstrap-dev/bootstrap/internal/bmc"
	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// A new attempt of the boot stage (one more node in the profile, a fixed BMC address, a new ISO)
// must not power-cycle nodes that are already booted and whose own inputs did not change. The
// runner scopes env.Steps.Done to the current attempt; bootJournal adds, per node, the steps of
// earlier attempts (env.Steps.Previous) when they were done with the node's current inputs:
//
//   - every per-node step record carries the node's input fingerprint (field nodeInputs, see
//     nodeFingerprints) and the ETag of the ISO it was done for (isoETag);
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

// bootStepRecheck is the per-node step saying why a node whose earlier records could have been
// carried is booted again: its BMC showed the boot undone (reruns check the present).
const bootStepRecheck = "recheck"

// bootJournal is the bmc.Journal the boot stage hands to bmc.BootAll.
type bootJournal struct {
	steps pipeline.Steps
	ids   map[string]nodeStamp // node → its current fingerprint and ISO ETag
	carry map[string]bool      // nodes whose earlier records with the same fingerprint count as done
}

// nodeStamp is what every per-node record carries besides its own data.
type nodeStamp struct {
	NodeInputs string `json:"nodeInputs"`
	ISOETag    string `json:"isoETag,omitempty"`
}

// carriedRecord is the data of a node's carried step.
type carriedRecord struct {
	nodeStamp
	// Power is the earlier attempt's power record (the BMC action that booted the node), if any.
	Power json.RawMessage `json:"power,omitempty"`
}

// carriedNode is a node whose earlier records count as done in this attempt.
type carriedNode struct {
	Name string
	// BootedETag is the ETag of the ISO its carried power step booted, when known.
	BootedETag string
}

// newBootJournal decides, for each node, whether earlier attempts' records may be carried, and
// journals the inputs marker of nodes that start afresh. It returns the carried nodes.
//
// recheck, when set, is asked about the nodes that could be carried and returns, for those whose
// BMC shows the boot undone (powered off, its ISO gone), why: such a node starts afresh in this
// attempt — booted again, once, with the reason journaled as "node:<node>/recheck".
func newBootJournal(steps pipeline.Steps, ids map[string]nodeStamp, nodes []string, recheck func([]string) map[string]string) (*bootJournal, []carriedNode, error) {
	j := &bootJournal{steps: steps, ids: ids, carry: map[string]bool{}}
	var carried []carriedNode
	var candidates []string
	for _, n := range nodes {
		key := bmc.StepKey(n, bootStepInputs)
		var m nodeStamp
		if !(steps.Done(key, &m) && m.NodeInputs == ids[n].NodeInputs) && steps.Previous(key, &m) && m.NodeInputs == ids[n].NodeInputs {
			candidates = append(candidates, n)
		}
	}
	var stale map[string]string
	if recheck != nil && len(candidates) > 0 {
		stale = recheck(candidates)
	}
	for _, n := range nodes {
		key := bmc.StepKey(n, bootStepInputs)
		var m nodeStamp
		switch {
		case steps.Done(key, &m) && m.NodeInputs == ids[n].NodeInputs:
			// This attempt already started the node afresh: its own records are the truth.
		case stale[n] != "":
			if err := steps.Record(bmc.StepKey(n, bootStepRecheck), map[string]string{"reason": stale[n]}); err != nil {
				return nil, nil, fmt.Errorf("boot: node %s: %w", n, err)
			}
			if err := steps.Record(key, ids[n]); err != nil {
				return nil, nil, fmt.Errorf("boot: node %s: %w", n, err)
			}
		case steps.Previous(key, &m) && m.NodeInputs == ids[n].NodeInputs:
			j.carry[n] = true
			c, err := j.recordCarried(n)
			if err != nil {
				return nil, nil, err
			}
			carried = append(carried, c)
		default:
			if err := steps.Record(key, ids[n]); err != nil {
				return nil, nil, fmt.Errorf("boot: node %s: %w", n, err)
			}
		}
	}
	return j, carried, nil
}

// recordCarried journals, once per attempt, that node n's earlier records are carried.
func (j *bootJournal) recordCarried(n string) (carriedNode, error) {
	c := carriedNode{Name: n}
	rec := carriedRecord{nodeStamp: j.ids[n]}
	var power json.RawMessage
	if j.Done(bmc.StepKey(n, bmc.StepPower), &power) {
		rec.Power = power
		var m nodeStamp
		if json.Unmarshal(power, &m) == nil {
			c.BootedETag = m.ISOETag
		}
	}
	key := bmc.StepKey(n, bootStepCarried)
	if j.steps.Done(key, nil) {
		return c, nil
	}
	if err := j.steps.Record(key, rec); err != nil {
		return c, fmt.Errorf("boot: node %s: %w", n, err)
	}
	return c, nil
}

// Done implements bmc.Journal: the step is done in this attempt, or carried from an earlier one,
// with the node's current inputs.
func (j *bootJournal) Done(key string, out any) bool {
	node := keyNode(key)
	id, ok := j.ids[node]
	if !ok {
		return j.steps.Done(key, out)
	}
	var raw json.RawMessage
	var m nodeStamp
	switch {
	case j.steps.Done(key, &raw):
	case j.carry[node] && j.steps.Previous(key, &raw):
	default:
		return false
	}
	if json.Unmarshal(raw, &m) != nil || m.NodeInputs != id.NodeInputs {
		return false
	}
	return out == nil || json.Unmarshal(raw, out) == nil
}

// Record implements bmc.Journal: the data is journaled with the node's stamp.
func (j *bootJournal) Record(key string, data any) error {
	id, ok := j.ids[keyNode(key)]
	if !ok {
		return j.steps.Record(key, data)
	}
	raw, err := stampRecord(data, id)
	if err != nil {
		return fmt.Errorf("record %s: %w", key, err)
	}
	return j.steps.Record(key, raw)
}

// stampRecord encodes data (a JSON object) with the stamp's fields added first.
func stampRecord(data any, id nodeStamp) (json.RawMessage, error) {
	raw, err := json.Marshal(data)
	if err != nil {
		return nil, err
	}
	if len(raw) < 2 || raw[0] != '{' {
		return nil, fmt.Errorf("step data must be a JSON object, got %.20s", raw)
	}
	head, err := json.Marshal(id)
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

// nodeBootKey is what one node's boot depends on: its BMC (address, user, secret reference, CA)
// and ISO URL, its own profile entry (role, MACs, root device, network config, ISO
// customizations) and its own view of the ISO (kernel arguments, ignition). The shared ISO's
// ETag is left out on purpose: every profile change rebuilds the agent ISO (agent-config lists
// all hosts), so one more worker would change every node's ETag and reboot the whole cluster.
// A kept node booted from an older ETag gets a warning naming the replay that would reboot it.
type nodeBootKey struct {
	Input          bootNodeInput `json:"input"`
	Profile        site.Node     `json:"profile"`
	KernelArgs     []string      `json:"kernelArgs,omitempty"`
	IgnitionSHA256 string        `json:"ignitionSHA256,omitempty"`
}

// nodeFingerprints returns each node's stamp: the fingerprint of its nodeBootKey and its ETag.
func nodeFingerprints(env *pipeline.Env) (map[string]nodeStamp, error) {
	in, err := readBootInputs(env)
	if err != nil {
		return nil, err
	}
	iso, err := readISOOutput(env)
	if err != nil {
		return nil, err
	}
	ids := make(map[string]nodeStamp, len(in.Nodes))
	for i, n := range in.Nodes {
		view := iso.Nodes[n.Name]
		key := nodeBootKey{Input: n, Profile: env.Site.Nodes[i], KernelArgs: view.KernelArgs, IgnitionSHA256: view.IgnitionSHA256}
		fp, err := pipeline.Fingerprint(key)
		if err != nil {
			return nil, fmt.Errorf("node %s: %w", n.Name, err)
		}
		ids[n.Name] = nodeStamp{NodeInputs: fp, ISOETag: view.ETag}
	}
	return ids, nil
}

// journal returns the per-node journal for targets: earlier attempts' steps of nodes whose own
// inputs are unchanged count as done.
func (Boot) journal(env *pipeline.Env, targets []bmc.Target, recheck func([]string) map[string]string) (*bootJournal, error) {
	ids, err := nodeFingerprints(env)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(targets))
	for i, t := range targets {
		names[i] = t.Node
	}
	j, carried, err := newBootJournal(env.Steps, ids, names, recheck)
	if err != nil {
		return nil, err
	}
	for _, c := range carried {
		bootEmit(env, pipeline.Event{Kind: pipeline.Info, Node: c.Name, Message: "node " + c.Name +
			": its inputs are unchanged since an earlier attempt: its journaled steps are kept (no new power action once powered)"})
		if now := ids[c.Name].ISOETag; c.BootedETag != "" && now != "" && c.BootedETag != now {
			bootEmit(env, pipeline.Event{Kind: pipeline.Warning, Node: c.Name, Message: fmt.Sprintf(
				"node %s booted ISO %s; the ISO is now %s but the node's own inputs did not change, so it is left running: "+
					"run `bootstrap replay boot --node %s` to boot it from the new ISO", c.Name, c.BootedETag, now, c.Name)})
		}
	}
	return j, nil
}
