package upgrade_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/mirror"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade/upgradetest"
)

// A Subscription on the mirror's CatalogSource of the running minor (cs-<catalog>-v4-17) is
// moved, per hop that changes minor, to the same catalog's CatalogSource of the next minor: twice
// on a two-minor plan, never on a z-stream hop; one on another source is not moved. The moves
// are in the table and the JSON, a plan written before moves existed still parses, and the
// delta carries each target catalog with the operator's bundle when no step of the hop does.
func TestPlanMovesSubscriptionsToTheNextMinorsCatalog(t *testing.T) {
	d := upgradetest.Standard(t, true)
	raw := string(upgradetest.State(upgradetest.StateOptions{Version: "4.17.20", Legacy: true}))
	if !strings.Contains(raw, "source: redhat-operators") {
		t.Fatal("the state fixture no longer subscribes legacy-op through redhat-operators")
	}
	st, err := upgrade.ParseState("state.yaml", []byte(strings.Replace(raw, "source: redhat-operators", "source: cs-redhat-operator-index-v4-17", 1)))
	if err != nil {
		t.Fatal(err)
	}
	p, err := upgrade.Compute(load(t, d), st, upgrade.Options{To: "4.19.5"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range p.Hops {
		for _, m := range h.Subscriptions {
			got = append(got, h.To+" "+m.Subject()+" "+m.From+"->"+m.To+" in "+m.SourceNamespace)
			if !strings.Contains(m.Source, "mirror-config") || m.Package != "legacy-op" {
				t.Errorf("move %+v: source or package missing", m)
			}
		}
	}
	last := p.Hops[len(p.Hops)-1]
	want := []string{
		p.Hops[0].To + " legacy/legacy-op cs-redhat-operator-index-v4-17->cs-redhat-operator-index-v4-18 in openshift-marketplace",
		last.To + " legacy/legacy-op cs-redhat-operator-index-v4-18->cs-redhat-operator-index-v4-19 in openshift-marketplace",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("plan %s moves:\n%s\nwant\n%s", hops(p), strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var tb bytes.Buffer
	if err := p.WriteTable(&tb); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(tb.String(), "subscription legacy/legacy-op: CatalogSource cs-redhat-operator-index-v4-18 -> cs-redhat-operator-index-v4-19 (namespace openshift-marketplace)") {
		t.Errorf("table does not show the move:\n%s", tb.String())
	}
	js, err := p.JSON()
	if err != nil {
		t.Fatal(err)
	}
	back, err := upgrade.ParsePlan(js)
	if err != nil || len(back.Hops[0].Subscriptions) != 1 || !sameMove(back.Hops[0].Subscriptions[0], p.Hops[0].Subscriptions[0]) {
		t.Fatalf("the JSON plan does not read back its moves: %v %+v", err, back)
	}
	old := []byte(`{"from":"4.17.20","to":"4.18.24","hops":[{"from":"4.17.20","to":"4.18.24","payload":"` + upgradetest.Payload("4.18.24") + `"}]}`)
	if op, err := upgrade.ParsePlan(old); err != nil || op.Hops[0].Subscriptions != nil {
		t.Errorf("a plan without moves: %v %+v", err, op)
	}

	isc, notes, err := upgrade.Delta(p, load(t, d))
	if err != nil || len(notes) != 0 {
		t.Fatalf("delta: %v %v", err, notes)
	}
	for _, want := range []string{"catalog: registry.redhat.io/redhat/redhat-operator-index:v4.18", "catalog: registry.redhat.io/redhat/redhat-operator-index:v4.19",
		"name: legacy-op", "minVersion: 1.0.0"} {
		if !bytes.Contains(isc, []byte(want)) {
			t.Errorf("the delta does not carry the catalogs the Subscription moves to (%s):\n%s", want, isc)
		}
	}
	f := filepath.Join(t.TempDir(), "delta.yaml")
	if err := os.WriteFile(f, isc, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := mirror.LoadISC(f); err != nil {
		t.Errorf("the mirror refuses the delta: %v\n%s", err, isc)
	}

	plain, err := upgrade.Compute(load(t, d), state(t, upgradetest.StateOptions{Version: "4.17.20", Legacy: true}), upgrade.Options{To: "4.19.5"})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range plain.Hops {
		if len(h.Subscriptions) != 0 {
			t.Errorf("hop %s moves a Subscription on redhat-operators: %+v", h.To, h.Subscriptions)
		}
	}
	if js, _ := plain.JSON(); bytes.Contains(js, []byte(`"subscriptions"`)) {
		t.Error("a plan that moves nothing writes a subscriptions key (a plan with no move keeps the bytes it had)")
	}
}

func sameMove(a, b upgrade.SubscriptionMove) bool {
	return a.Subject() == b.Subject() && a.Package == b.Package && a.From == b.From && a.To == b.To &&
		a.SourceNamespace == b.SourceNamespace && a.Source == b.Source
}

// The demo's layout: the next minors' catalogs carried under the name the cluster subscribes
// through (catalogs/4.19/cs-...-v4-17). The hop whose operator step carries the target catalog
// adds nothing; the hop with no step for the operator carries its next-minor catalog with the
// bundle installed then, so the CatalogSource the run moves the Subscription to is mirrored.
func TestDeltaCarriesTheCatalogAMoveNeeds(t *testing.T) {
	d := upgradetest.Standard(t, true)
	const src = "cs-certified-operator-index-v4-17"
	old := upgradetest.Bundle{Name: "nvidia-network-operator.v25.1.0", Version: "25.1.0"}
	cur := upgradetest.Bundle{Name: "nvidia-network-operator.v25.4.0", Version: "25.4.0", Replaces: old.Name}
	d.Catalog("4.18", src, "nvidia-network-operator", "stable", old, cur)
	d.Catalog("4.19", src, "nvidia-network-operator", "stable", cur)
	raw := string(upgradetest.State(upgradetest.StateOptions{Version: "4.17.20", Network: "25.1.0"}))
	st, err := upgrade.ParseState("state.yaml", []byte(strings.Replace(raw, "source: certified-operators", "source: "+src, 1)))
	if err != nil {
		t.Fatal(err)
	}
	p, err := upgrade.Compute(load(t, d), st, upgrade.Options{To: "4.19.5"})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(p.Hops); n != 3 || len(p.Hops[0].Subscriptions) != 1 || len(p.Hops[2].Subscriptions) != 1 || len(p.Hops[0].After) != 1 {
		t.Fatalf("plan %s: %+v", hops(p), p.Hops)
	}
	isc, notes, err := upgrade.Delta(p, load(t, d))
	if err != nil || len(notes) != 0 {
		t.Fatalf("delta: %v %v", err, notes)
	}
	f := filepath.Join(t.TempDir(), "delta.yaml")
	if err := os.WriteFile(f, isc, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := mirror.LoadISC(f)
	if err != nil {
		t.Fatalf("the mirror refuses the delta: %v\n%s", err, isc)
	}
	var ops []string
	for _, op := range cfg.Mirror.Operators {
		for _, pk := range op.Packages {
			for _, ch := range pk.Channels {
				ops = append(ops, op.Catalog+" "+pk.Name+"/"+ch.Name+":"+ch.MinVersion+".."+ch.MaxVersion)
			}
		}
	}
	want := "registry.redhat.io/redhat/certified-operator-index:v4.18 nvidia-network-operator/stable:25.4.0..25.4.0 " +
		"registry.redhat.io/redhat/certified-operator-index:v4.19 nvidia-network-operator/stable:25.4.0..25.4.0"
	if got := strings.Join(ops, " "); got != want {
		t.Errorf("delta operators\n got %s\nwant %s\n%s", got, want, isc)
	}
}
