package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/cluster/clustertest"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade/upgradetest"
)

// `upgrade run` killed with SIGKILL at a write of each step whose resume must not repeat a
// request (the write reached the API server, the process never heard back, so never journaled
// it): the canary node's label, the worker pool's pause and unpause, the canary pool's deletion.
// The next process resumes, reads the cluster, and the hop completes with each of those
// requests made exactly as often as one uninterrupted run makes it, counted at a tap in front of
// the API server.
func TestUpgradeRunKilledAtEachWrite(t *testing.T) {
	var srv clustertest.Server
	t.Cleanup(srv.Stop)
	cfg := srv.Config(t)
	d := clustertest.Dynamic(t, cfg)
	const pools = "/apis/machineconfiguration.openshift.io/v1/machineconfigpools/"
	once := map[string]int{ // what one hop writes, by request
		"PATCH /api/v1/nodes/w0":            2, // the canary label, on and off
		"PATCH " + pools + "worker":         2, // pause, unpause
		"PATCH " + pools + "worker-canary":  1, // created by server-side apply
		"DELETE " + pools + "worker-canary": 1,
	}
	for _, tc := range []struct {
		step  string
		write string
		nth   int
	}{
		{upgrade.StepCanary, "PATCH /api/v1/nodes/w0", 1},
		{upgrade.StepPause, "PATCH " + pools + "worker", 1},
		{upgrade.StepUnpause, "PATCH " + pools + "worker", 2},
		{upgrade.StepClose, "DELETE " + pools + "worker-canary", 1},
	} {
		t.Run(tc.step, func(t *testing.T) {
			clock := &upgradetest.Clock{Factor: 1200}
			upgradetest.Lab(t, d, upgradetest.LabOptions{Version: "4.17.10", Workers: []string{"w0", "w1"}}, clock)
			sim := &upgradetest.Sim{D: d, Clock: clock}
			sim.Start(t)
			sim.Settle(t)
			tap := upgradetest.NewTap(t, cfg)
			var child atomic.Int64
			tap.OnWrite = func(w string, n int) {
				if w == tc.write && n == tc.nth {
					_ = syscall.Kill(int(child.Load()), syscall.SIGKILL)
				}
			}
			dir := t.TempDir()
			kc := filepath.Join(dir, "kubeconfig")
			if err := os.WriteFile(kc, tap.Kubeconfig(), 0o600); err != nil {
				t.Fatal(err)
			}
			plan, _ := json.Marshal(upgrade.Plan{From: "4.17.10", To: "4.18.5", Hops: []upgrade.Hop{{From: "4.17.10", To: "4.18.5", Payload: upgradetest.Payload("4.18.5")}}})
			pf := filepath.Join(dir, "plan.json")
			if err := os.WriteFile(pf, plan, 0o644); err != nil {
				t.Fatal(err)
			}
			args, _ := json.Marshal([]string{"--dir", filepath.Join(dir, ".bootstrap"), "upgrade", "run", "--plan", pf, "--kubeconfig", kc,
				"--soak", "0s", "--poll", "50ms", "--accept-rollback-contract", "Jane Doe", "--no-etcd-backup", "the lab has no etcd"})
			run := func() (bool, string) {
				killed, code, out := runUpgradeChild(t, args, &child)
				if !killed && code != 0 {
					t.Fatalf("exit %d\n%s", code, out)
				}
				return killed, out
			}
			if killed, out := run(); !killed {
				t.Fatalf("first run: not killed at %s #%d\n%s", tc.write, tc.nth, out)
			}
			if killed, out := run(); killed {
				t.Fatalf("resumed run killed\n%s", out)
			}
			for w, n := range once {
				if got := tap.Count(w); got != n {
					t.Errorf("%s: %d requests after a kill at the %s step, want %d", w, got, tc.step, n)
				}
			}
			if n := tap.Writes("4.18.5"); n != 1 {
				t.Errorf("spec.desiredUpdate written %d times", n)
			}
			j, err := os.ReadFile(filepath.Join(dir, ".bootstrap", "upgrade", "journal.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			if n := bytes.Count(j, []byte(`"step":"4.18.5/`+tc.step+`"`)); n != 1 {
				t.Errorf("%s journaled %d times", tc.step, n)
			}
		})
	}
}
