package upgrade_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/mirror"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade/upgradetest"
)

// The delta of a plan is an ImageSetConfiguration the mirror accepts, holding exactly what the
// plan needs and content.json lacks: the releases not carried (each alone: min = max), the
// planned bundles' package channels in the right minor's catalog, the driver image.
func TestDelta(t *testing.T) {
	d := gateDir(t)
	d.Content("4.17.10", "4.17.20") // 4.18.24 and 4.18.30 not carried yet
	c := load(t, d)
	gate := "ack-4.17-kube-1.31-api-removals-in-4.18"
	st := state(t, upgradetest.StateOptions{Version: "4.17.10", GPU: "25.3.1", Legacy: true, Gates: []string{gate}, Acked: []string{gate}})
	o := upgrade.Options{To: "4.18.30", Accept: map[string]string{"GPUOperatorRisk": "Bob"}}
	if _, err := upgrade.Compute(c, st, o); err == nil {
		t.Fatal("a plan through releases not carried must be refused without AllowMissing")
	}
	o.AllowMissing = true
	p, err := upgrade.Compute(c, st, o)
	if err != nil {
		t.Fatal(err)
	}
	if p.Hops[0].Carried != "yes" || p.Hops[1].Carried != "no" || p.Hops[2].Carried != "no" {
		t.Fatalf("carried %s %s %s", p.Hops[0].Carried, p.Hops[1].Carried, p.Hops[2].Carried)
	}
	b, notes, err := upgrade.Delta(p, c)
	if err != nil || len(notes) != 0 {
		t.Fatalf("%v %v", err, notes)
	}
	f := filepath.Join(t.TempDir(), "delta.yaml")
	if err := os.WriteFile(f, b, 0o644); err != nil {
		t.Fatal(err)
	}
	isc, err := mirror.LoadISC(f)
	if err != nil {
		t.Fatalf("the mirror refuses the delta: %v\n%s", err, b)
	}
	var chans []string
	for _, ch := range isc.Mirror.Platform.Channels {
		chans = append(chans, ch.Name+":"+ch.MinVersion+".."+ch.MaxVersion)
	}
	if strings.Join(chans, " ") != "stable-4.18:4.18.24..4.18.24 stable-4.18:4.18.30..4.18.30" {
		t.Fatalf("channels %v\n%s", chans, b)
	}
	var ops []string
	for _, op := range isc.Mirror.Operators {
		for _, pk := range op.Packages {
			for _, ch := range pk.Channels {
				ops = append(ops, op.Catalog+" "+pk.Name+"/"+ch.Name+":"+ch.MinVersion+".."+ch.MaxVersion)
			}
		}
	}
	want := []string{
		"registry.redhat.io/redhat/certified-operator-index:v4.18 gpu-operator-certified/v25.3:25.3.2..25.3.2",
		"registry.redhat.io/redhat/redhat-operator-index:v4.17 legacy-op/stable:1.1.0..1.1.0",
		"registry.redhat.io/redhat/redhat-operator-index:v4.18 legacy-op/stable:1.2.0..1.2.0",
	}
	if strings.Join(ops, "\n") != strings.Join(want, "\n") {
		t.Fatalf("operators:\n%s\nwant:\n%s", strings.Join(ops, "\n"), strings.Join(want, "\n"))
	}
	if len(isc.Mirror.AdditionalImages) != 1 || isc.Mirror.AdditionalImages[0].Name != "nvcr.io/nvidia/driver:570.148.08-rhcos4.18" {
		t.Fatalf("additional %+v", isc.Mirror.AdditionalImages)
	}

	// everything carried: the delta holds no release
	d.Content(upgradetest.Releases...)
	p, err = upgrade.Compute(load(t, d), st, o)
	if err != nil {
		t.Fatal(err)
	}
	b, _, _ = upgrade.Delta(p, load(t, d))
	_ = os.WriteFile(f, b, 0o644)
	if isc, err := mirror.LoadISC(f); err != nil || len(isc.Mirror.Platform.Channels) != 0 || len(isc.Mirror.Operators) != 3 {
		t.Fatalf("%v: a carried release in the delta:\n%s", err, b)
	}
}

// A package whose catalog default channel is not among the channels the delta keeps gets a
// defaultChannel the delta keeps (the mirror's catalog filter, as oc-mirror's, refuses the ISC
// otherwise); one whose default is kept gets none (TestDelta's). Without it the demo's delta
// (the GPU Operator on stable, the catalog's default v25.10) was refused by bootstrap mirror.
func TestDeltaNamesAKeptDefaultChannel(t *testing.T) {
	d := gateDir(t)
	rel := "catalogs/4.18/certified-operators/gpu-operator-certified.json"
	b, err := os.ReadFile(filepath.Join(d.Path, rel))
	if err != nil {
		t.Fatal(err)
	}
	newer := `{"schema":"olm.channel","package":"gpu-operator-certified","name":"v25.10","entries":[{"name":"gpu-operator-certified.v25.10.0","replaces":"gpu-operator-certified.v25.3.2"}]}
{"schema":"olm.bundle","name":"gpu-operator-certified.v25.10.0","package":"gpu-operator-certified","image":"registry.example.com/gpu-operator-certified/bundle@sha256:2510","properties":[{"type":"olm.package","value":{"packageName":"gpu-operator-certified","version":"25.10.0"}}]}
`
	d.Write(rel, append([]byte(strings.Replace(string(b), `"defaultChannel":"v25.3"`, `"defaultChannel":"v25.10"`, 1)), newer...))
	d.Content("4.17.10", "4.17.20")
	gate := "ack-4.17-kube-1.31-api-removals-in-4.18"
	st := state(t, upgradetest.StateOptions{Version: "4.17.10", GPU: "25.3.1", Legacy: true, Gates: []string{gate}, Acked: []string{gate}})
	c := load(t, d)
	p, err := upgrade.Compute(c, st, upgrade.Options{To: "4.18.30", Accept: map[string]string{"GPUOperatorRisk": "Bob"}, AllowMissing: true})
	if err != nil {
		t.Fatal(err)
	}
	out, _, err := upgrade.Delta(p, c)
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "delta.yaml")
	if err := os.WriteFile(f, out, 0o644); err != nil {
		t.Fatal(err)
	}
	isc, err := mirror.LoadISC(f)
	if err != nil {
		t.Fatalf("the mirror refuses the delta: %v\n%s", err, out)
	}
	defaults := map[string]string{}
	for _, op := range isc.Mirror.Operators {
		for _, pk := range op.Packages {
			defaults[pk.Name] = pk.DefaultChannel
		}
	}
	if defaults["gpu-operator-certified"] != "v25.3" || defaults["legacy-op"] != "" {
		t.Fatalf("default channels %v, want gpu-operator-certified v25.3 (its catalog's v25.10 not kept) and legacy-op none\n%s", defaults, out)
	}
}
