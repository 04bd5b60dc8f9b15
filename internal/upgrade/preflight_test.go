package upgrade_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/cluster/clustertest"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade/upgradetest"
)

// Preflight on the real API server: every result names its object; a degraded operator, an
// Upgradeable=False operator, a missing admin-ack, a pool paused by someone else and a node not
// Ready fail; a PDB allowing 0 disruptions and a MachineHealthCheck are named as warnings.
func TestPreflightReadsEveryObject(t *testing.T) {
	l := newLab(t, upgradetest.LabOptions{Version: "4.17.10"}, upgradetest.Faults{})
	clustertest.InstallCRD(t, server.Config(t), upgradetest.MachineHealthCheckCRD())
	upgradetest.BlockingPDB(t, l.d, "db", "w1")
	now := l.clock.Now().UTC().Format(time.RFC3339)
	cond := func(typ, st, reason, msg string) map[string]any {
		return map[string]any{"type": typ, "status": st, "reason": reason, "message": msg, "lastTransitionTime": now}
	}
	clustertest.MustSetStatus(t, l.d, clustertest.ClusterOperators, "", "ingress", map[string]any{
		"versions": []any{map[string]any{"name": "operator", "version": "4.17.10"}},
		"conditions": []any{cond("Available", "True", "", ""), cond("Degraded", "True", "IngressDegraded", "2 of 3 router pods ready"),
			cond("Upgradeable", "False", "AdminAckRequired", "ack the removed APIs")},
	}, true)
	clustertest.Create(t, l.d, upgradetest.MHCs, map[string]any{"apiVersion": "machine.openshift.io/v1beta1", "kind": "MachineHealthCheck",
		"metadata": map[string]any{"name": "workers", "namespace": upgradetest.WorkloadNamespace}})
	clustertest.MustSetStatus(t, l.d, clustertest.Nodes, "", "w2", map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "False",
		"reason": "KubeletNotReady", "message": "PLEG is not healthy", "lastTransitionTime": now, "lastHeartbeatTime": now}}}, true)
	if _, err := l.c.Patch(context.Background(), poolRef("worker"), []byte(`{"spec":{"paused":true}}`)); err != nil {
		t.Fatal(err)
	}
	v, err := upgrade.ReadView(context.Background(), l.c, l.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	fs, err := upgrade.Preflight(context.Background(), l.c, v, upgrade.PreflightOptions{Acks: []string{"ack-4.17-kube-1.31-api-removals-in-4.18"}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, f := range fs {
		got[f.Result+" "+f.Object] += f.Message + "|"
	}
	for _, want := range []struct{ key, msg string }{
		{"fail ClusterOperator/ingress", "Degraded=True (IngressDegraded)"},
		{"fail ClusterOperator/ingress", "Upgradeable=False (AdminAckRequired)"},
		{"fail ConfigMap openshift-config/admin-acks", "ack-4.17-kube-1.31-api-removals-in-4.18 not acknowledged"},
		{"fail MachineConfigPool/worker", "paused by someone else"},
		{"fail Node/w2", "not Ready (KubeletNotReady)"},
		{"warn PodDisruptionBudget workload/db", "allows 0 disruptions"},
		{"warn MachineHealthCheck workload/workers", "pause it"},
		{"pass ClusterVersion/version", "Available=True"},
		{"pass ClusterOperator/etcd", "available, not degraded"},
		{"pass MachineConfigPool/master", "1 of 1 machines updated"},
	} {
		if !strings.Contains(got[want.key], want.msg) {
			t.Errorf("%s: want %q, got %q", want.key, want.msg, got[want.key])
		}
	}
	if !upgrade.Failed(fs) || fs[0].Result != upgrade.Fail {
		t.Error("failures should come first and fail the preflight")
	}
	// Our own canary pool, paused by a resumed run, is not a failure.
	fs, _ = upgrade.Preflight(context.Background(), l.c, v, upgrade.PreflightOptions{Paused: []string{"worker"}})
	for _, f := range fs {
		if f.Object == "MachineConfigPool/worker" && f.Result != upgrade.Pass {
			t.Errorf("a pool we paused: %+v", f)
		}
	}
}
