package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/upgrade"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade/upgradetest"
)

// upgradeInputs writes the standard carried graph with catalogs and a captured state of a
// 4.17.10 cluster running the GPU Operator and legacy-op.
func upgradeInputs(t *testing.T) (graph, state string) {
	d := upgradetest.Standard(t, true)
	d.Catalog("4.18", "certified-operators", "gpu-operator-certified", "v25.3",
		upgradetest.Bundle{Name: "gpu-operator-certified.v25.3.1", Version: "25.3.1"},
		upgradetest.Bundle{Name: "gpu-operator-certified.v25.3.2", Version: "25.3.2", Replaces: "gpu-operator-certified.v25.3.1"})
	d.Catalog("4.17", "redhat-operators", "legacy-op", "stable",
		upgradetest.Bundle{Name: "legacy-op.v1.0.0", Version: "1.0.0", MaxOCP: "4.17"},
		upgradetest.Bundle{Name: "legacy-op.v1.1.0", Version: "1.1.0", Replaces: "legacy-op.v1.0.0"})
	d.Catalog("4.18", "redhat-operators", "legacy-op", "stable",
		upgradetest.Bundle{Name: "legacy-op.v1.2.0", Version: "1.2.0", SkipRange: ">=1.0.0 <1.2.0"})
	gate := "ack-4.17-kube-1.31-api-removals-in-4.18"
	state = filepath.Join(t.TempDir(), "state.yaml")
	if err := os.WriteFile(state, upgradetest.State(upgradetest.StateOptions{Version: "4.17.10", GPU: "25.3.1", Legacy: true,
		Gates: []string{gate}, Acked: []string{gate}}), 0o644); err != nil {
		t.Fatal(err)
	}
	return d.Path, state
}

// The table names every hop with its digest, edge kind and risks, the gate verdicts with their
// sources, the steps, acks and what to carry; -o json gives the same plan twice byte for byte.
func TestUpgradePlan(t *testing.T) {
	graph, state := upgradeInputs(t)
	args := []string{"upgrade", "plan", "--to", "4.18.30", "--state", state, "--graph", graph, "--accept-risk", "GPUOperatorRisk=Jane Doe"}
	code, out, errs := run(t, append(args, "-o", "table")...)
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	for _, want := range []string{
		"upgrade plan 4.17.10 -> 4.18.30 (amd64)",
		"blocked edge removed: 4.17.20 -> 4.18.30 (graph-data/blocked-edges/4.18.30-Regression.yaml)",
		upgradetest.Payload("4.18.24"),
		"before: legacy-op (legacy/legacy-op): update legacy-op.v1.0.0 -> legacy-op.v1.1.0",
		"after: gpu-operator-certified (nvidia-gpu-operator/gpu-operator-certified): update gpu-operator-certified.v25.3.1 -> gpu-operator-certified.v25.3.2",
		"driver:570.148.08-rhcos4.18",
		"ack ack-4.17-kube-1.31-api-removals-in-4.18: given",
		"accepted: GPUOperatorRisk by Jane Doe on 4.17.20 -> 4.18.24",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q", want)
		}
	}
	if !regexp.MustCompile(`(?m)^2 +4\.17\.20 +4\.18\.24 +stable-4\.18 +conditional +GPUOperatorRisk:applies,accepted by Jane Doe +yes +` + regexp.QuoteMeta(upgradetest.Payload("4.18.24")) + "$").MatchString(out) {
		t.Errorf("hop 2's row is not as expected:\n%s", out)
	}
	if testing.Verbose() {
		t.Logf("\n%s", out)
	}
	var first string
	for i := 0; i < 2; i++ {
		code, js, errs := run(t, append(args, "-o", "json")...)
		if code != exitOK {
			t.Fatalf("json: exit %d\n%s%s", code, js, errs)
		}
		var res struct {
			OK   bool
			Data struct {
				Hops []struct{ From, To, Payload, Edge string }
			}
		}
		if err := json.Unmarshal([]byte(js), &res); err != nil || !res.OK || len(res.Data.Hops) != 3 || res.Data.Hops[1].Edge != "conditional" {
			t.Fatalf("json %v: %s", err, js)
		}
		// what `upgrade run --plan` reads: `-o json > plan.json` as the help says
		if p, err := upgrade.ParsePlan([]byte(js)); err != nil || len(p.Hops) != 3 || p.Hops[1].Payload != upgradetest.Payload("4.18.24") {
			t.Fatalf("ParsePlan of the -o json output: %v %+v", err, p)
		}
		if i == 0 {
			first = js
		} else if js != first {
			t.Fatalf("two runs differ:\n%s\n%s", first, js)
		}
	}
}

// Bad input exits 3 naming what is missing and its remedy; a blocked gate exits 2 after the plan.
func TestUpgradePlanRefusals(t *testing.T) {
	graph, state := upgradeInputs(t)
	base := []string{"upgrade", "plan", "--state", state, "--graph", graph}
	cases := []struct {
		args []string
		code int
		want []string
	}{
		{[]string{"--to", "4.18.30"}, exitInvalid, []string{"GPUOperatorRisk", "remedy:", "--accept-risk GPUOperatorRisk=PERSON"}},
		{[]string{"--to", "4.18.99"}, exitInvalid, []string{"--to 4.18.99 is not a release of the carried graph", "maxVersion: 4.18.99"}},
		{[]string{"--to", "4.16.30"}, exitInvalid, []string{"not newer than the cluster's version 4.17.10"}},
		{[]string{"--to", "4.18.30", "--accept-risk", "nobody"}, exitInvalid, []string{"want NAME=PERSON"}},
		{[]string{"--to", "4.18.30"}, exitFailure, []string{"needs --to VERSION, --graph DIR and the cluster"}},
	}
	for i, tc := range cases {
		args := append(append([]string(nil), base...), tc.args...)
		if i == len(cases)-1 {
			args = []string{"upgrade", "plan", "--to", "4.18.30", "--state", state}
		}
		code, out, errs := run(t, args...)
		if code != tc.code {
			t.Errorf("%v: exit %d, want %d\n%s%s", tc.args, code, tc.code, out, errs)
		}
		for _, w := range tc.want {
			if !strings.Contains(errs, w) {
				t.Errorf("%v: stderr lacks %q:\n%s", tc.args, w, errs)
			}
		}
	}
	// --isc writes the delta and plans through what is not carried
	isc := filepath.Join(t.TempDir(), "delta.yaml")
	if code, out, errs := run(t, append(base, "--to", "4.18.30", "--accept-risk", "GPUOperatorRisk=Jane", "--isc", isc)...); code != exitOK ||
		!strings.Contains(errs, "the delta to mirror is in "+isc) {
		t.Fatalf("--isc: exit %d\n%s%s", code, out, errs)
	}
	if b, err := os.ReadFile(isc); err != nil || !strings.Contains(string(b), "kind: ImageSetConfiguration") || !strings.Contains(string(b), "gpu-operator-certified") {
		t.Fatalf("delta %v:\n%s", err, b)
	}
	// a hash mismatch: the graph changed after the mirror wrote content.json
	p := filepath.Join(graph, "cincinnati", "stable-4.18-amd64.json")
	b, _ := os.ReadFile(p)
	if err := os.WriteFile(p, b[:len(b)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := run(t, append(base, "--to", "4.18.30", "-o", "json")...)
	if code != exitInvalid {
		t.Fatalf("hash mismatch: exit %d\n%s", code, errs)
	}
	// a blocked gate: the admin-gate not acknowledged
	graph, _ = upgradeInputs(t)
	st := filepath.Join(t.TempDir(), "state.yaml")
	_ = os.WriteFile(st, upgradetest.State(upgradetest.StateOptions{Version: "4.17.10", Gates: []string{"ack-4.17-x-in-4.18"}}), 0o644)
	code, out, errs := run(t, "upgrade", "plan", "--to", "4.18.30", "--state", st, "--graph", graph)
	if code != exitPreflight || !strings.Contains(out, "BLOCKER: 4.17.20 -> 4.18.24: ack-4.17-x-in-4.18: not acknowledged") || !strings.Contains(errs, "1 blocker") {
		t.Fatalf("blocked: exit %d\n%s%s", code, out, errs)
	}
}
