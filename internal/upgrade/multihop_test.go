package upgrade_test

import (
	"context"
	"strings"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/upgrade"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade/upgradetest"
)

// Two minors, one hop after the other on the same journal, each canary first: at each hop's
// unpause only the canary runs the hop's release while the other workers still run the one
// before, and each hop sets spec.desiredUpdate exactly once.
func TestRunTwoHopsCanaryPerHop(t *testing.T) {
	l := newLab(t, upgradetest.LabOptions{Version: "4.17.10", GPU: []string{"w0", "w1"}}, upgradetest.Faults{})
	j := &upgradetest.Journal{}
	hops := []upgrade.Hop{
		{From: "4.17.10", To: "4.18.5", Payload: upgradetest.Payload("4.18.5")},
		{From: "4.18.5", To: "4.19.2", Payload: upgradetest.Payload("4.19.2")},
	}
	for i, h := range hops {
		o := l.opts(t)
		o.Hop = h
		o.Canary = []string{"w0", "w1"}[i] // a different canary each hop
		var atUnpause []string
		o.Crash = func(step string) error {
			if step == upgrade.StepUnpause {
				for _, n := range []string{"w0", "w1", "w2"} {
					atUnpause = append(atUnpause, l.current(t, n))
				}
			}
			return nil
		}
		res, err := upgrade.Run(context.Background(), l.c, j, o)
		if err != nil || !res.Done {
			t.Fatalf("hop %s: %v (journal %v)", h.To, err, j.Keys)
		}
		for k, n := range []string{"w0", "w1", "w2"} {
			want := upgradetest.Rendered("worker", h.From)
			if n == o.Canary {
				want = upgradetest.Rendered("worker-canary", h.To)
			}
			if atUnpause[k] != want {
				t.Errorf("hop %s: at unpause %s ran %s, want %s", h.To, n, atUnpause[k], want)
			}
		}
		var ev upgrade.NodeEvidence
		j.Done(h.To+"/"+upgrade.StepCanaryDone, &ev)
		build := upgradetest.OSBuild(h.To)
		if ev.Node != o.Canary || ev.OSBuild != build || !strings.Contains(ev.OSImage, build) || ev.OSImageBefore == ev.OSImage ||
			!strings.Contains(ev.DriverPod, "nvidia-driver-daemonset-"+build+"-"+o.Canary) ||
			len(ev.Blacklist) != 1 || !strings.Contains(ev.Blacklist[0], "irdma: blacklisted in rendered-worker-canary-"+h.To) {
			t.Errorf("hop %s: canary evidence %+v", h.To, ev)
		}
		var closed struct {
			Nodes map[string][]upgrade.Transition
		}
		j.Done(h.To+"/"+upgrade.StepClose, &closed)
		for n, pool := range map[string]string{"m0": "master", "w2": "worker"} {
			if tr := closed.Nodes[n]; len(tr) != 1 || tr[0].Config != upgradetest.Rendered(pool, h.To) || tr[0].At.IsZero() {
				t.Errorf("hop %s: %s's journaled transitions %+v, want one to %s", h.To, n, tr, upgradetest.Rendered(pool, h.To))
			}
		}
		if got := l.cvPatch.Load(); got != int32(i+1) {
			t.Errorf("after hop %s ClusterVersion patched %d times, want %d", h.To, got, i+1)
		}
		for _, n := range []string{"m0", "w0", "w1", "w2"} {
			if cur := l.current(t, n); !strings.HasSuffix(cur, "-"+h.To) {
				t.Errorf("after hop %s node %s runs %s", h.To, n, cur)
			}
		}
	}
	for _, h := range hops {
		for _, s := range []string{upgrade.StepCanary, upgrade.StepPause, upgrade.StepCanaryDone, upgrade.StepUnpause, upgrade.StepClose} {
			if !j.Done(h.To+"/"+s, nil) {
				t.Errorf("journal lacks %s/%s", h.To, s)
			}
		}
	}
}
