package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/bootstrap-dev/bootstrap/internal/cluster/clustertest"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade/upgradetest"
)

// A trip through the command: the canary's machine-config daemon reports Degraded; `upgrade run`
// prints one sentence and where it gathered, exits 1, the worker pool stays paused; the gather
// holds the cluster's objects and the report lists the stop.
func TestUpgradeRunStopsAndGathers(t *testing.T) {
	var srv clustertest.Server
	t.Cleanup(srv.Stop)
	d := clustertest.Dynamic(t, srv.Config(t))
	clock := &upgradetest.Clock{Factor: 1}
	upgradetest.Lab(t, d, upgradetest.LabOptions{Version: "4.17.10", Workers: []string{"w0", "w1"}}, clock)
	sim := &upgradetest.Sim{D: d, Clock: clock, Faults: upgradetest.Faults{DegradedNode: "w0"}}
	sim.Start(t)
	sim.Settle(t)
	dir := t.TempDir()
	kc := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kc, srv.Kubeconfig(t), 0o600); err != nil {
		t.Fatal(err)
	}
	plan, _ := json.Marshal(upgrade.Plan{From: "4.17.10", To: "4.18.5", Hops: []upgrade.Hop{{From: "4.17.10", To: "4.18.5", Payload: upgradetest.Payload("4.18.5")}}})
	pf := filepath.Join(dir, "plan.json")
	if err := os.WriteFile(pf, plan, 0o644); err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(dir, ".bootstrap")
	var out, errb bytes.Buffer
	code := Execute([]string{"--dir", work, "upgrade", "run", "--plan", pf, "--kubeconfig", kc, "--soak", "0s", "--poll", "50ms",
		"--accept-rollback-contract", "Jane Doe", "--no-etcd-backup", "the lab has no etcd"}, strings.NewReader(""), &out, &errb)
	t.Logf("upgrade run printed:\n%s", errb.String())
	if code != exitFailure {
		t.Fatalf("exit %d, want %d", code, exitFailure)
	}
	if !strings.Contains(errb.String(), "stopped: Node/w0: the machine-config daemon reports Degraded: unexpected on-disk state") {
		t.Errorf("no one-sentence stop naming the node")
	}
	m := regexp.MustCompile(`gathered: (\S+) \((\d+) files`).FindStringSubmatch(errb.String())
	if m == nil {
		t.Fatal("no gather named")
	}
	if !strings.HasPrefix(m[1], filepath.Join(work, "upgrade", "gather", "hop-4.18.5-")) {
		t.Errorf("gathered into %s, want under the upgrade dir", m[1])
	}
	if nodes, err := os.ReadFile(filepath.Join(m[1], "nodes.json")); err != nil || !bytes.Contains(nodes, []byte("irdma-blacklist.conf")) {
		t.Errorf("the gathered nodes lack the daemon's reason: %v", err)
	}
	pool, err := d.Resource(clustertest.MachineConfigPools).Get(context.Background(), "worker", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p, _, _ := unstructured.NestedBool(pool.Object, "spec", "paused"); !p {
		t.Error("the worker pool was unpaused")
	}
	out.Reset()
	errb.Reset()
	if code := Execute([]string{"--dir", work, "report"}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("report: exit %d\n%s", code, errb.String())
	}
	if !strings.Contains(out.String(), "### hop-4.18.5: stopped") || !strings.Contains(out.String(), "| hop-4.18.5 | Node/w0: the machine-config daemon reports Degraded") {
		t.Errorf("the report does not show the stop:\n%s", out.String())
	}
}
