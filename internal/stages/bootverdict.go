package stages

import (
	"encoding/json"
	"sort"
	"strings"

	"github.com/bootstrap-dev/bootstrap/internal/bmc"
	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
)

// Boot verdicts of a node, as `bootstrap status` and the report show them.
const (
	// BootedVerified: the journal holds evidence of a reboot into the ISO (bmc evidence rules).
	BootedVerified = "booted"
	// BootedUnverified: booted without evidence; NodeBoot.Unverified says why.
	BootedUnverified = "booted, unverified"
	// BootNotConfirmed: the node's latest boot attempt acted on it but recorded no boot (failed,
	// interrupted or still running).
	BootNotConfirmed = "not booted"
)

// NodeBoot is what the journal says about one node's boot: its evidence, or the caveat that
// none could be seen. A node with both was seen rebooting, but something (the ISO read) could not
// be witnessed.
type NodeBoot struct {
	Node  string `json:"node"`
	State string `json:"state"`
	// Evidence lists how the boot from the ISO was witnessed (bmc.NodeResult.Evidence, split).
	Evidence []string `json:"evidence,omitempty"`
	// Unverified is why the boot could not be witnessed (bmc.NodeResult.Unverified).
	Unverified string `json:"unverified,omitempty"`
	Attempt    int    `json:"attempt"` // the boot attempt the verdict comes from
}

// Caveat is the one-line text of a node's verdict: "booted: <evidence>", "booted, unverified:
// <why>" or "not booted (attempt N)".
func (n NodeBoot) Caveat() string {
	switch n.State {
	case BootedUnverified:
		return bmc.UnverifiedPrefix + n.Unverified
	case BootedVerified:
		return "booted: " + strings.Join(n.Evidence, "; ")
	}
	return n.State
}

// NodeBoots reads each node's boot verdict from the boot stage's journaled steps: the latest
// "node:<n>/booted" record (bmc.NodeResult). A node acted on again by a later attempt (a recheck,
// changed inputs, a replay) without a new booted record is BootNotConfirmed: the earlier
// evidence no longer describes it. Records carried from an earlier attempt (bootcarry.go) keep
// the earlier verdict. Nodes are sorted by name.
func NodeBoots(h pipeline.History) []NodeBoot {
	got := map[string]*NodeBoot{}
	for _, a := range h.Attempts {
		if a.Stage != NameBoot {
			continue
		}
		for _, s := range a.Steps {
			node, act := s.Node(), s.Action()
			if node == "" || act == bootStepCarried {
				continue
			}
			nb := got[node]
			if act != bmc.StepConfirm {
				if nb != nil && nb.Attempt != a.Attempt {
					*nb = NodeBoot{Node: node, State: BootNotConfirmed, Attempt: a.Attempt}
				} else if nb == nil {
					got[node] = &NodeBoot{Node: node, State: BootNotConfirmed, Attempt: a.Attempt}
				}
				continue
			}
			var r bmc.NodeResult
			if json.Unmarshal(s.Data, &r) != nil {
				continue
			}
			v := NodeBoot{Node: node, State: BootedVerified, Unverified: r.Unverified, Attempt: a.Attempt}
			if r.Evidence != "" {
				v.Evidence = strings.Split(r.Evidence, "; ")
			}
			if r.Unverified != "" {
				v.State = BootedUnverified
			}
			got[node] = &v
		}
	}
	out := make([]NodeBoot, 0, len(got))
	for _, v := range got {
		out = append(out, *v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Node < out[j].Node })
	return out
}

// Unverified returns the names of the nodes booted without evidence.
func Unverified(boots []NodeBoot) []string {
	var out []string
	for _, b := range boots {
		if b.State == BootedUnverified {
			out = append(out, b.Node)
		}
	}
	return out
}
