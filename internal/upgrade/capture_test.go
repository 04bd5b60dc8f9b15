package upgrade_test

import (
	"context"
	"os"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/bootstrap-dev/bootstrap/internal/cluster"
	"github.com/bootstrap-dev/bootstrap/internal/cluster/clustertest"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade/upgradetest"
)

var server clustertest.Server

func TestMain(m *testing.M) {
	code := m.Run()
	server.Stop()
	os.Exit(code)
}

// The state read from a real kube-apiserver with the OpenShift and OLM CRDs: ClusterVersion
// history, CSVs with operatorframework.io/properties (maxOpenShiftVersion), an OLM copy of a CSV
// (ignored), Subscriptions, nodes, pools and the admin ConfigMaps; then a plan from it.
func TestCaptureFromTheAPIServer(t *testing.T) {
	cfg := server.Config(t)
	d := clustertest.Dynamic(t, cfg)
	for _, ns := range []string{"nvidia-gpu-operator", "legacy", "other", "openshift-config", "openshift-config-managed"} {
		// the lab tests leave their namespaces (namespace deletion is not finished in testbin)
		ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}
		if _, err := d.Resource(clustertest.Namespaces).Create(context.Background(), ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	clustertest.Create(t, d, clustertest.ClusterVersions, map[string]any{"apiVersion": "config.openshift.io/v1", "kind": "ClusterVersion",
		"metadata": map[string]any{"name": "version"}, "spec": map[string]any{"clusterID": "0b5c3a0e-0000-4000-8000-000000000001", "channel": "stable-4.17"}})
	hist := func(state, v string) map[string]any {
		return map[string]any{"state": state, "version": v, "image": upgradetest.Payload(v), "verified": true,
			"startedTime": "2026-11-01T10:00:00Z", "completionTime": "2026-11-01T11:00:00Z"}
	}
	clustertest.MustSetStatus(t, d, clustertest.ClusterVersions, "", "version", map[string]any{
		"desired": map[string]any{"version": "4.17.10", "image": upgradetest.Payload("4.17.10")}, "observedGeneration": 1,
		"versionHash": "h", "availableUpdates": nil,
		"history": []any{hist("Completed", "4.17.10"), hist("Completed", "4.16.30")}}, true)
	csv := func(ns, name, version string, labels, ann map[string]any) {
		md := map[string]any{"name": name, "namespace": ns}
		if labels != nil {
			md["labels"] = labels
		}
		if ann != nil {
			md["annotations"] = ann
		}
		clustertest.Create(t, d, clustertest.ClusterServiceVersions, map[string]any{"apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion",
			"metadata": md, "spec": map[string]any{"displayName": name, "version": version, "install": map[string]any{"strategy": "deployment"}}})
		clustertest.MustSetStatus(t, d, clustertest.ClusterServiceVersions, ns, name, map[string]any{"phase": "Succeeded"}, true)
	}
	csv("nvidia-gpu-operator", "gpu-operator-certified.v25.3.1", "25.3.1", nil, nil)
	csv("other", "gpu-operator-certified.v25.3.1", "25.3.1", map[string]any{"olm.copiedFrom": "nvidia-gpu-operator"}, nil)
	csv("legacy", "legacy-op.v1.0.0", "1.0.0", nil, map[string]any{"operatorframework.io/properties": `{"properties":[{"type":"olm.maxOpenShiftVersion","value":"4.17"}]}`})
	sub := func(ns, pkg, channel, source, installed string) {
		clustertest.Create(t, d, clustertest.Subscriptions, map[string]any{"apiVersion": "operators.coreos.com/v1alpha1", "kind": "Subscription",
			"metadata": map[string]any{"name": pkg, "namespace": ns},
			"spec":     map[string]any{"name": pkg, "channel": channel, "source": source, "sourceNamespace": "openshift-marketplace"}})
		clustertest.MustSetStatus(t, d, clustertest.Subscriptions, ns, pkg, map[string]any{"installedCSV": installed, "lastUpdated": "2026-11-01T10:00:00Z"}, true)
	}
	sub("nvidia-gpu-operator", "gpu-operator-certified", "v25.3", "certified-operators", "gpu-operator-certified.v25.3.1")
	sub("legacy", "legacy-op", "stable", "redhat-operators", "legacy-op.v1.0.0")
	clustertest.Create(t, d, clustertest.Nodes, map[string]any{"apiVersion": "v1", "kind": "Node",
		"metadata": map[string]any{"name": "gpu-0", "labels": map[string]any{"kubernetes.io/arch": "amd64", "node-role.kubernetes.io/worker": ""}}})
	for _, p := range []string{"master", "worker"} {
		clustertest.Create(t, d, clustertest.MachineConfigPools, map[string]any{"apiVersion": "machineconfiguration.openshift.io/v1", "kind": "MachineConfigPool",
			"metadata": map[string]any{"name": p}, "spec": map[string]any{"paused": false}})
	}
	gate := "ack-4.17-kube-1.31-api-removals-in-4.18"
	cms := clustertest.GVR("", "v1", "configmaps")
	clustertest.Create(t, d, cms, map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "admin-gates", "namespace": "openshift-config-managed"}, "data": map[string]any{gate: "APIs removed in 4.18"}})
	clustertest.Create(t, d, cms, map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "admin-acks", "namespace": "openshift-config"}, "data": map[string]any{}})

	c, err := cluster.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, list, err := upgrade.Capture(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if st.Version != "4.17.10" || st.Channel != "stable-4.17" || st.Arch != "amd64" || len(st.History) != 2 {
		t.Fatalf("version %s channel %s arch %s history %v", st.Version, st.Channel, st.Arch, st.History)
	}
	if len(st.CSVs) != 2 || st.CSVs[0].Name != "legacy-op.v1.0.0" || st.CSVs[0].MaxOpenShift != "4.17" || st.CSVs[1].Phase != "Succeeded" {
		t.Fatalf("csvs %+v", st.CSVs)
	}
	if len(st.Subscriptions) != 2 || st.Subscriptions[1].InstalledCSV != "gpu-operator-certified.v25.3.1" || len(st.Pools) != 2 || st.AdminGates[gate] == "" {
		t.Fatalf("state %+v", st)
	}
	// the List is a state file: parsed again it gives the same state
	again, err := upgrade.ParseState("state.json", list)
	if err != nil || again.Version != st.Version || len(again.CSVs) != len(st.CSVs) {
		t.Fatalf("again: %v %+v", err, again)
	}
	p, err := upgrade.Compute(load(t, upgradetest.Standard(t, true)), st, upgrade.Options{To: "4.18.30", Accept: map[string]string{"GPUOperatorRisk": "Bob"}})
	if err != nil {
		t.Fatal(err)
	}
	if hops(p) != "4.17.10 -> 4.17.20 -> 4.18.24 -> 4.18.30" || len(p.Blockers) == 0 {
		t.Fatalf("plan %s, blockers %v", hops(p), p.Blockers)
	}
}
