package upgrade_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/upgrade"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade/upgradetest"
)

// A graph the size of the public one (4 minors of 150 releases, each updating to every later
// release of its minor and of the next, with a conditional GPU risk on a tenth of the minor
// updates) is read and planned over in well under the time a person waits.
func TestLargeGraph(t *testing.T) {
	d := upgradetest.NewDir(t)
	g := new(upgradetest.Graph)
	var vs []string
	for minor := 16; minor <= 19; minor++ {
		for z := 0; z < 150; z++ {
			vs = append(vs, fmt.Sprintf("4.%d.%d", minor, z))
		}
	}
	g.Nodes(vs...)
	edges := 0
	for i, a := range vs {
		for j := i + 1; j < len(vs) && j < i+300; j++ {
			if j%10 == 0 && vs[j][:4] != a[:4] {
				g.Cond(a, vs[j], upgradetest.GPURisk("GPU"))
			} else {
				g.Edge(a, vs[j])
			}
			edges++
		}
	}
	d.Graph("stable-4.19", g)
	d.Content(vs...)
	start := time.Now()
	c := load(t, d)
	st := state(t, upgradetest.StateOptions{Version: "4.16.3", GPU: "25.3.1"})
	p, err := upgrade.Compute(c, st, upgrade.Options{To: "4.19.149"})
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Hops) != 3 || p.Hops[0].To != "4.17.149" || p.Hops[1].To != "4.18.149" {
		t.Fatalf("path %s", hops(p))
	}
	t.Logf("%d releases, %d edges: loaded and planned in %v", len(vs), edges, took)
	if took > 30*time.Second {
		t.Fatalf("took %v", took)
	}
}
