package upgrade_test

import (
	"strings"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/upgrade"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade/upgradetest"
)

// gateDir is the standard graph with catalogs: the GPU Operator's v25.3 channel in 4.18,
// legacy-op in 4.17 (1.1.0 lifts the max of 1.0.0) and 4.18 (1.2.0 by skipRange).
func gateDir(t *testing.T) *upgradetest.Dir {
	d := upgradetest.Standard(t, true)
	d.Catalog("4.18", "certified-operators", "gpu-operator-certified", "v25.3",
		upgradetest.Bundle{Name: "gpu-operator-certified.v25.3.1", Version: "25.3.1"},
		upgradetest.Bundle{Name: "gpu-operator-certified.v25.3.2", Version: "25.3.2", Replaces: "gpu-operator-certified.v25.3.1"})
	d.Catalog("4.17", "redhat-operators", "legacy-op", "stable",
		upgradetest.Bundle{Name: "legacy-op.v1.0.0", Version: "1.0.0", MaxOCP: "4.17"},
		upgradetest.Bundle{Name: "legacy-op.v1.1.0", Version: "1.1.0", Replaces: "legacy-op.v1.0.0"})
	d.Catalog("4.18", "redhat-operators", "legacy-op", "stable",
		upgradetest.Bundle{Name: "legacy-op.v1.2.0", Version: "1.2.0", SkipRange: ">=1.0.0 <1.2.0"})
	return d
}

func verdict(h upgrade.Hop, check, subject string) *upgrade.Verdict {
	for i := range h.Gate {
		if h.Gate[i].Check == check && strings.HasPrefix(h.Gate[i].Subject, subject) {
			return &h.Gate[i]
		}
	}
	return nil
}

// The minor hop's gate, each verdict with its source: legacy-op's maxOpenShiftVersion 4.17 is
// lifted by an update planned before the hop from the 4.17 catalog; both operators reach a
// bundle of the 4.18 catalog (replaces, skipRange) and are updated after it; the GPU Operator's
// range holds 4.18 and its driver image for 4.18 ends -rhcos4.18, for 4.19 -rhel9.6; the
// admin-ack of the running release is named.
func TestGate(t *testing.T) {
	c := load(t, gateDir(t))
	gate := "ack-4.17-kube-1.31-api-removals-in-4.18"
	st := state(t, upgradetest.StateOptions{Version: "4.17.10", GPU: "25.3.1", Legacy: true, Gates: []string{gate}, Acked: []string{gate}})
	p, err := upgrade.Compute(c, st, upgrade.Options{To: "4.18.30", Accept: map[string]string{"GPUOperatorRisk": "Bob"}})
	if err != nil {
		t.Fatal(err)
	}
	h := p.Hops[1] // 4.17.20 -> 4.18.24
	if len(p.Blockers) != 0 {
		t.Fatalf("blockers %v", p.Blockers)
	}
	v := verdict(h, "maxOpenShiftVersion", "legacy-op")
	if v == nil || v.Result != "pass" || !strings.Contains(v.Message, "legacy-op.v1.1.0") || v.Source != "catalogs/4.17/redhat-operators channel stable" {
		t.Fatalf("max verdict %+v", v)
	}
	if len(h.Before) < 1 || h.Before[0].Action != "update legacy-op.v1.0.0 -> legacy-op.v1.1.0 (olm.maxOpenShiftVersion none)" {
		t.Fatalf("before %+v", h.Before)
	}
	after := map[string]string{}
	for _, s := range h.After {
		after[s.Subject] = s.Action
	}
	if after["legacy-op (legacy/legacy-op)"] != "update legacy-op.v1.1.0 -> legacy-op.v1.2.0" ||
		after["gpu-operator-certified (nvidia-gpu-operator/gpu-operator-certified)"] != "update gpu-operator-certified.v25.3.1 -> gpu-operator-certified.v25.3.2" {
		t.Fatalf("after %v", after)
	}
	if v := verdict(h, "nvidia-range", "gpu-operator-certified"); v == nil || v.Result != "pass" || !strings.Contains(v.Source, "nvidia-matrix.yaml") {
		t.Fatalf("range %+v", v)
	}
	if v := verdict(h, "gpu-driver", "gpu-operator-certified"); v == nil || !strings.Contains(v.Message, "nvcr.io/nvidia/driver:570.148.08-rhcos4.18") {
		t.Fatalf("driver %+v", v)
	}
	if len(h.Acks) != 1 || h.Acks[0].Key != gate || !h.Acks[0].Given {
		t.Fatalf("acks %+v", h.Acks)
	}
	kinds := map[string]int{}
	for _, im := range p.Images {
		kinds[im.Kind]++
	}
	if kinds["release"] != 3 || kinds["signature"] != 3 || kinds["driver"] != 1 || kinds["bundle"] != 3 || kinds["cosign-signature"] != 0 {
		t.Fatalf("images %v: %+v", kinds, p.Images)
	}

	// 4.18 -> 4.19: the driver image changes OS suffix.
	st = state(t, upgradetest.StateOptions{Version: "4.18.30", GPU: "25.3.1"})
	p, err = upgrade.Compute(c, st, upgrade.Options{To: "4.19.5"})
	if err != nil {
		t.Fatal(err)
	}
	if v := verdict(p.Hops[0], "gpu-driver", "gpu-operator-certified"); v == nil || !strings.Contains(v.Message, "driver:570.148.08-rhel9.6") {
		t.Fatalf("driver %+v", v)
	}
	if v := verdict(p.Hops[0], "catalog", "gpu-operator-certified"); v == nil || v.Result != "unknown" || len(p.Undecided) == 0 {
		t.Fatalf("a catalog not carried must be unknown and undecided: %+v %v", v, p.Undecided)
	}
}

// What blocks a hop is named with its source: an admin-gate not acknowledged, a max version no
// carried update lifts, a channel the next catalog lacks, a GPU Operator outside its range.
func TestGateBlocks(t *testing.T) {
	d := upgradetest.Standard(t, true)
	d.Catalog("4.18", "certified-operators", "gpu-operator-certified", "v24.9",
		upgradetest.Bundle{Name: "gpu-operator-certified.v24.9.2", Version: "24.9.2"})
	d.Catalog("4.18", "certified-operators", "nvidia-network-operator", "other",
		upgradetest.Bundle{Name: "nvidia-network-operator.v25.4.0", Version: "25.4.0"})
	c := load(t, d)
	gate := "ack-4.17-kube-1.31-api-removals-in-4.18"
	st := state(t, upgradetest.StateOptions{Version: "4.17.10", GPU: "24.9.2", Network: "25.4.0", Legacy: true, Gates: []string{gate},
		NotUpgradeable: "IncompatibleOperatorsInstalled", Unmanaged: true})
	p, err := upgrade.Compute(c, st, upgrade.Options{To: "4.18.30", Accept: map[string]string{"GPUOperatorRisk": "Bob"}})
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(p.Blockers, "\n")
	for _, want := range []string{
		gate + ": not acknowledged",
		"legacy-op (legacy/legacy-op): legacy-op.v1.0.0 declares olm.maxOpenShiftVersion 4.17",
		"no catalog catalogs/4.17/redhat-operators carried",
		"channel stable of package nvidia-network-operator is not in the 4.18 catalog",
		"gpu-operator-certified 24.9.2: declares OpenShift 4.12-4.17, not 4.18: update the operator first to a version whose range holds 4.17 and 4.18 (25.3, 25.10 in the matrix)",
		"4.17.20 -> 4.18.24: ClusterVersion: Upgradeable=False (IncompatibleOperatorsInstalled)",
		"4.17.10 -> 4.17.20: Deployment openshift-monitoring/cluster-monitoring-operator: unmanaged overrides",
		"4.18.24 -> 4.18.30: Deployment openshift-monitoring/cluster-monitoring-operator: unmanaged overrides",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("blockers lack %q:\n%s", want, all)
		}
	}
}

// Bad input is refused with the reason a caller can branch on and a remedy.
func TestPlanRefuses(t *testing.T) {
	d := upgradetest.Standard(t, true)
	c := load(t, d)
	st := state(t, upgradetest.StateOptions{Version: "4.17.10"})
	notCarried := upgradetest.Standard(t, false)
	notCarried.Content("4.17.10", "4.17.20", "4.18.30") // 4.18.24 left out
	cases := []struct {
		name   string
		c      *upgrade.Carried
		to     string
		reason upgrade.Reason
		want   string
	}{
		{"unknown target", c, "4.18.99", upgrade.ReasonUnknownTarget, "its 4.18 releases include 4.18.20, 4.18.22, 4.18.24, 4.18.30"},
		{"older target", c, "4.17.5", upgrade.ReasonOlderTarget, "not newer than the cluster's version 4.17.10"},
		{"same version", c, "4.17.10", upgrade.ReasonOlderTarget, "a plan cannot go back"},
		{"release not carried", load(t, notCarried), "4.18.30", upgrade.ReasonNotCarried, "needs release(s) 4.18.24, not in content.json"},
	}
	for _, tc := range cases {
		_, err := upgrade.Compute(tc.c, st, upgrade.Options{To: tc.to})
		r := refusal(t, err, tc.reason)
		if !strings.Contains(r.Error(), tc.want) || r.Remedy() == "" {
			t.Errorf("%s: %v (remedy %q), want %q", tc.name, r, r.Remedy(), tc.want)
		}
	}
	if r := refusal(t, func() error {
		_, err := upgrade.Compute(load(t, notCarried), st, upgrade.Options{To: "4.18.30"})
		return err
	}(), upgrade.ReasonNotCarried); !strings.Contains(r.Remedy(), "maxVersion: 4.18.24") {
		t.Errorf("remedy lacks the ISC lines: %s", r.Remedy())
	}
	// two minors up: two minor hops, never one
	if p, err := upgrade.Compute(c, st, upgrade.Options{To: "4.19.5"}); err != nil || hops(p) != "4.17.10 -> 4.17.20 -> 4.18.24 -> 4.18.30 -> 4.19.5" {
		t.Errorf("4.19.5: %v %v", err, p)
	}
	_, err := upgrade.ParseState("s.yaml", upgradetest.State(upgradetest.StateOptions{Version: "4.17.10", Partial: "4.17.20"}))
	if r := refusal(t, err, upgrade.ReasonState); !strings.Contains(r.Error(), "an update to 4.17.20 is under way") {
		t.Errorf("%v", r)
	}
	_, err = upgrade.ParseState("s.yaml", []byte("apiVersion: v1\nkind: List\nitems: []\n"))
	refusal(t, err, upgrade.ReasonState)
}

// From 4.21 CRI-O verifies the release's cosign signature on pull: its sha256-<hex>.sig tag is
// listed to carry beside the release; the GPU driver for 4.21 ends -rhel9.6.
func TestCosignFrom421(t *testing.T) {
	d := upgradetest.NewDir(t)
	d.Graph("stable-4.21", new(upgradetest.Graph).Nodes("4.20.5", "4.21.1").Edge("4.20.5", "4.21.1"))
	st := state(t, upgradetest.StateOptions{Version: "4.20.5", GPU: "25.10.0"})
	p, err := upgrade.Compute(load(t, d), st, upgrade.Options{To: "4.21.1"})
	if err != nil {
		t.Fatal(err)
	}
	hex := strings.TrimPrefix(upgradetest.Payload("4.21.1"), "quay.io/openshift-release-dev/ocp-release@sha256:")
	var cosign, driver string
	for _, im := range p.Images {
		switch im.Kind {
		case "cosign-signature":
			cosign = im.Ref
		case "driver":
			driver = im.Ref
		}
	}
	if cosign != "quay.io/openshift-release-dev/ocp-release:sha256-"+hex+".sig" || driver != "nvcr.io/nvidia/driver:580.95.05-rhel9.6" {
		t.Fatalf("cosign %q driver %q", cosign, driver)
	}
	if p.Hops[0].Carried != "not checked: no content.json beside the graph" || len(p.Undecided) < 2 {
		t.Fatalf("carried %q undecided %v", p.Hops[0].Carried, p.Undecided)
	}
}
