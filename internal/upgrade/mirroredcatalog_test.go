package upgrade_test

import (
	"strings"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/upgrade"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade/upgradetest"
)

// A Subscription through the CatalogSource a mirror named for the running minor
// (cs-certified-operator-index-v4-17) is gated, in the 4.18 hop, against the catalog the mirror
// carried under the 4.18 name (catalogs/4.18/cs-certified-operator-index-v4-18), and the verdict
// names that directory; without it the catalog is unknown.
func TestGateReadsTheMirrorNamedCatalogOfTheTargetMinor(t *testing.T) {
	for _, carried := range []bool{true, false} {
		d := upgradetest.Standard(t, true)
		if carried {
			d.Catalog("4.18", "cs-certified-operator-index-v4-18", "gpu-operator-certified", "v25.3",
				upgradetest.Bundle{Name: "gpu-operator-certified.v25.3.1", Version: "25.3.1"},
				upgradetest.Bundle{Name: "gpu-operator-certified.v25.3.2", Version: "25.3.2", Replaces: "gpu-operator-certified.v25.3.1"})
		}
		doc := strings.ReplaceAll(string(upgradetest.State(upgradetest.StateOptions{Version: "4.17.10", GPU: "25.3.1"})),
			"source: certified-operators", "source: cs-certified-operator-index-v4-17")
		st, err := upgrade.ParseState("state.yaml", []byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		p, err := upgrade.Compute(load(t, d), st, upgrade.Options{To: "4.18.30", Accept: map[string]string{"GPUOperatorRisk": "Jane"}})
		if err != nil {
			t.Fatal(err)
		}
		var v *upgrade.Verdict
		for _, h := range p.Hops {
			if strings.HasPrefix(h.To, "4.18") && v == nil {
				v = verdict(h, "catalog", "gpu-operator-certified")
			}
		}
		switch {
		case v == nil:
			t.Fatalf("carried %v: no catalog verdict for the GPU Operator", carried)
		case carried && (v.Result != "pass" || !strings.Contains(v.Source, "catalogs/4.18/cs-certified-operator-index-v4-18")):
			t.Errorf("carried: %+v", v)
		case !carried && v.Result == "pass":
			t.Errorf("not carried, yet: %+v", v)
		}
	}
}
