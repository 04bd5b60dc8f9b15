package upgrade_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/upgrade"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade/upgradetest"
)

func load(t *testing.T, d *upgradetest.Dir) *upgrade.Carried {
	t.Helper()
	c, err := upgrade.Load(d.Path, "amd64")
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	return c
}

func state(t *testing.T, o upgradetest.StateOptions) *upgrade.State {
	t.Helper()
	st, err := upgrade.ParseState("state.yaml", upgradetest.State(o))
	if err != nil {
		t.Fatalf("state: %v", err)
	}
	return st
}

func hops(p *upgrade.Plan) string {
	vs := []string{p.From}
	for _, h := range p.Hops {
		vs = append(vs, h.To)
	}
	return strings.Join(vs, " -> ")
}

func risk(h upgrade.Hop, name string) *upgrade.RiskVerdict {
	for i := range h.Risks {
		if h.Risks[i].Name == name {
			return &h.Risks[i]
		}
	}
	return nil
}

func refusal(t *testing.T, err error, want upgrade.Reason) *upgrade.Refusal {
	t.Helper()
	var r *upgrade.Refusal
	if !errors.As(err, &r) {
		t.Fatalf("want a refusal (%s), got %v", want, err)
	}
	if r.Reason != want {
		t.Fatalf("refusal reason %s, want %s: %v", r.Reason, want, err)
	}
	return r
}

// With the GPU Operator installed every path from 4.17.10 to 4.18.30 crosses a risk that applies
// (GPUOperatorRisk, decided from the CSV; NVIDIA's 4.18.22) or one that cannot be decided
// offline (BareMetalRisk): the plan is refused, naming them and the flag, until a person accepts
// one; the accepted path is then taken and the acceptance recorded.
func TestConditionalRisksNeedANamedPerson(t *testing.T) {
	d := upgradetest.Standard(t, true)
	c := load(t, d)
	st := state(t, upgradetest.StateOptions{Version: "4.17.10", GPU: "25.3.1"})
	_, err := upgrade.Compute(c, st, upgrade.Options{To: "4.18.30"})
	r := refusal(t, err, upgrade.ReasonRisk)
	for _, want := range []string{"GPUOperatorRisk", "applies", "gpu-operator-certified.v25.3.1", "--accept-risk GPUOperatorRisk=PERSON"} {
		if !strings.Contains(r.Error()+r.Remedy(), want) {
			t.Errorf("refusal lacks %q:\n%s\n%s", want, r.Error(), r.Remedy())
		}
	}

	p, err := upgrade.Compute(c, st, upgrade.Options{To: "4.18.30", Accept: map[string]string{"BareMetalRisk": "Alice Martin"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := hops(p); got != "4.17.10 -> 4.17.15 -> 4.18.20 -> 4.18.30" {
		t.Fatalf("path %s", got)
	}
	v := risk(p.Hops[1], "BareMetalRisk")
	if v == nil || v.Decision != upgrade.Undecidable || v.AcceptedBy != "Alice Martin" || !strings.Contains(v.Source, "needs the cluster's metrics") {
		t.Fatalf("BareMetalRisk verdict %+v", v)
	}
	if p.Hops[1].Edge != "conditional" || len(p.Accepts) != 1 || p.Accepts[0].By != "Alice Martin" {
		t.Fatalf("hop %+v accepts %+v", p.Hops[1], p.Accepts)
	}

	p, err = upgrade.Compute(c, st, upgrade.Options{To: "4.18.30", Accept: map[string]string{"GPUOperatorRisk": "Bob"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := hops(p); got != "4.17.10 -> 4.17.20 -> 4.18.24 -> 4.18.30" {
		t.Fatalf("path %s", got)
	}
	if v := risk(p.Hops[1], "GPUOperatorRisk"); v == nil || v.Decision != upgrade.Applies || !strings.Contains(v.Source, "nvidia-gpu-operator/gpu-operator-certified.v25.3.1") {
		t.Fatalf("GPUOperatorRisk verdict %+v", v)
	}
}

// Without the GPU Operator the same risk is decided "not applies" from the CSVs and the edge is
// recommended; the blocked edge 4.17.20 -> 4.18.30 (no rules) is gone from the graph, so the
// plan goes through 4.18.24; the newest release wins a tie.
func TestRiskDecidedFromTheCSVsAndBlockedEdgeRemoved(t *testing.T) {
	c := load(t, upgradetest.Standard(t, true))
	st := state(t, upgradetest.StateOptions{Version: "4.17.10"})
	p, err := upgrade.Compute(c, st, upgrade.Options{To: "4.18.30"})
	if err != nil {
		t.Fatal(err)
	}
	if got := hops(p); got != "4.17.10 -> 4.17.20 -> 4.18.24 -> 4.18.30" {
		t.Fatalf("path %s", got)
	}
	v := risk(p.Hops[1], "GPUOperatorRisk")
	if v == nil || v.Decision != upgrade.NotApplies || v.AcceptedBy != "" || !strings.Contains(v.Source, `name=~"gpu-operator-certified[.].*"`) {
		t.Fatalf("verdict %+v", v)
	}
	if len(p.Graph.RemovedEdges) != 1 || !strings.HasPrefix(p.Graph.RemovedEdges[0], "4.17.20 -> 4.18.30 (graph-data/blocked-edges/4.18.30-Regression.yaml)") {
		t.Fatalf("removed %v", p.Graph.RemovedEdges)
	}
	if !p.Graph.Verified || p.Hops[0].Carried != "yes" || p.Hops[0].Payload != upgradetest.Payload("4.17.20") {
		t.Fatalf("graph %+v hop %+v", p.Graph, p.Hops[0])
	}
}

// From an EUS minor two minors up, with the eus channel carried: an EUS-to-EUS plan over the eus
// channel's releases, worker pools paused. Without the eus channel: an ordinary plan.
func TestEUSToEUS(t *testing.T) {
	st := state(t, upgradetest.StateOptions{Version: "4.16.30", Channel: "eus-4.16"})
	p, err := upgrade.Compute(load(t, upgradetest.Standard(t, true)), st, upgrade.Options{To: "4.18.30"})
	if err != nil {
		t.Fatal(err)
	}
	if p.EUS == nil || p.EUS.Channel != "eus-4.18" || strings.Join(p.EUS.PausePools, ",") != "worker" {
		t.Fatalf("eus %+v", p.EUS)
	}
	if got := hops(p); got != "4.16.30 -> 4.17.20 -> 4.18.24 -> 4.18.30" {
		t.Fatalf("path %s", got)
	}
	for _, h := range p.Hops {
		if h.Channel != "eus-4.18" {
			t.Errorf("hop %s -> %s channel %s", h.From, h.To, h.Channel)
		}
	}
	p, err = upgrade.Compute(load(t, upgradetest.Standard(t, true, "eus-4.18")), st, upgrade.Options{To: "4.18.30"})
	if err != nil {
		t.Fatal(err)
	}
	if p.EUS != nil || p.Hops[0].Channel != "stable-4.17" {
		t.Fatalf("eus %+v, first hop channel %s", p.EUS, p.Hops[0].Channel)
	}
}

// A missing intermediate minor is refused, naming the minor and the ImageSetConfiguration lines
// that carry it.
func TestMissingIntermediateMinor(t *testing.T) {
	c := load(t, upgradetest.Standard(t, false, "stable-4.17", "eus-4.18"))
	st := state(t, upgradetest.StateOptions{Version: "4.16.30"})
	_, err := upgrade.Compute(c, st, upgrade.Options{To: "4.18.30"})
	r := refusal(t, err, upgrade.ReasonNoPath)
	if !strings.Contains(r.Error(), "into 4.17") || !strings.Contains(r.Remedy(), "- name: stable-4.17") || !strings.Contains(r.Remedy(), "graph: true") {
		t.Fatalf("%v\nremedy: %s", r, r.Remedy())
	}
}

// The same inputs give the same plan, byte for byte, whatever the order files were written in.
func TestDeterministic(t *testing.T) {
	var outs []string
	for i := 0; i < 3; i++ {
		c := load(t, upgradetest.Standard(t, true))
		st := state(t, upgradetest.StateOptions{Version: "4.17.10", GPU: "25.3.1", Legacy: true})
		p, err := upgrade.Compute(c, st, upgrade.Options{To: "4.18.30", Accept: map[string]string{"GPUOperatorRisk": "Bob"}})
		if err != nil {
			t.Fatal(err)
		}
		p.Graph.Dir = "DIR" // the temporary directory differs
		b, err := p.JSON()
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, string(b))
	}
	if outs[0] != outs[1] || outs[1] != outs[2] {
		t.Fatalf("plans differ:\n%s\n---\n%s", outs[0], outs[1])
	}
}

// As the CVO: a conditional update whose risk has no rule it recognises is dropped, and so is a
// target declared twice as a conditional update from the same version (with its unconditional
// edge); both are named in the plan.
func TestEdgesTheCVODrops(t *testing.T) {
	d := upgradetest.NewDir(t)
	future := map[string]any{"url": "https://x", "name": "Future", "matchingRules": []any{map[string]any{"type": "Future"}}}
	d.Graph("stable-4.18", new(upgradetest.Graph).Nodes("4.17.10", "4.18.1", "4.18.2", "4.18.3").
		Edge("4.17.10", "4.18.2").Edge("4.17.10", "4.18.3").Edge("4.18.1", "4.18.3").Edge("4.18.2", "4.18.3").
		Cond("4.17.10", "4.18.1", future).
		Cond("4.17.10", "4.18.2", upgradetest.GPURisk("A")).Cond("4.17.10", "4.18.2", upgradetest.GPURisk("B")))
	c := load(t, d)
	st := state(t, upgradetest.StateOptions{Version: "4.17.10"})
	p, err := upgrade.Compute(c, st, upgrade.Options{To: "4.18.3"})
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(p.Graph.RemovedEdges, "\n")
	if len(p.Graph.RemovedEdges) != 2 || !strings.Contains(got, "4.17.10 -> 4.18.1 (risk Future has no rule the CVO recognises") ||
		!strings.Contains(got, "4.17.10 -> 4.18.2 (cincinnati/stable-4.18: 2 conditional updates declared") {
		t.Fatalf("removed:\n%s", got)
	}
	for _, to := range []string{"4.18.1", "4.18.2"} {
		_, err := upgrade.Compute(c, st, upgrade.Options{To: to, Accept: map[string]string{"Future": "x", "A": "x", "B": "x"}})
		refusal(t, err, upgrade.ReasonNoPath)
	}
}
