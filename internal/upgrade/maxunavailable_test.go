package upgrade_test

import (
	"context"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/bootstrap-dev/bootstrap/internal/cluster/clustertest"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade/upgradetest"
)

// After the soak the rest is unpaused with maxUnavailable: "50%" of the worker pool's four
// nodes lets the simulated MCO update two at a time, never more, and the step journals it.
func TestRunUnpausesWithMaxUnavailable(t *testing.T) {
	l := newLab(t, upgradetest.LabOptions{Version: "4.17.10", Workers: []string{"w0", "w1", "w2", "w3", "w4"}}, upgradetest.Faults{})
	o := l.opts(t)
	half := intstr.FromString("50%")
	o.MaxUnavailable = &half
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	most := 0
	wg.Add(1)
	go func() { // count the workers updating at once while the hop runs
		defer wg.Done()
		for ctx.Err() == nil {
			nl, err := l.d.Resource(clustertest.Nodes).List(ctx, metav1.ListOptions{})
			if err == nil {
				n := 0
				for _, x := range nl.Items {
					a := x.GetAnnotations()
					if x.GetName() != "w0" && x.GetName() != "m0" && a[upgrade.AnnDesiredConfig] != a[upgrade.AnnCurrentConfig] {
						n++
					}
				}
				most = max(most, n)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	j := &upgradetest.Journal{}
	_, err := upgrade.Run(context.Background(), l.c, j, o)
	stop()
	wg.Wait()
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if most != 2 {
		t.Errorf("at most %d of the four workers updated at once, want 2 (maxUnavailable 50%%)", most)
	}
	if mu, _, _ := unstructured.NestedFieldNoCopy(l.get(t, "pool", "worker").Object, "spec", "maxUnavailable"); mu != "50%" {
		t.Errorf("worker pool spec.maxUnavailable %v, want 50%%", mu)
	}
	var rec struct{ MaxUnavailable string }
	if j.Done("4.18.5/"+upgrade.StepUnpause, &rec); rec.MaxUnavailable != "50%" {
		t.Errorf("unpause journaled maxUnavailable %q", rec.MaxUnavailable)
	}
}
