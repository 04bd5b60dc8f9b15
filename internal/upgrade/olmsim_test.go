package upgrade_test

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/bootstrap-dev/bootstrap/internal/cluster/clustertest"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade/upgradetest"
)

// The simulated OLM on the real kube-apiserver: one InstallPlan per bundle step along the
// replaces chain (a skipRange jumps), waiting for approval; an approved one installs its CSV
// (Succeeded, the replaced one removed, the Subscription at it), then the next step is planned;
// a bundle that cannot be installed fails its InstallPlan and leaves the Subscription where it was.
func TestSimulatedOLM(t *testing.T) {
	d := clustertest.Dynamic(t, server.Config(t))
	olm := &upgradetest.OLM{D: d, Clock: &upgradetest.Clock{Factor: 1}, Fail: map[string]bool{"broken.v2.0.0": true},
		Catalogs: upgradetest.Catalogs{"cs-a": {
			"chain": {"stable": {{Name: "chain.v1.0.0", Version: "1.0.0"}, {Name: "chain.v1.1.0", Version: "1.1.0", Replaces: "chain.v1.0.0"},
				{Name: "chain.v1.2.0", Version: "1.2.0", Replaces: "chain.v1.1.0"}}},
			"jump": {"stable": {{Name: "jump.v1.0.0", Version: "1.0.0"}, {Name: "jump.v1.1.0", Version: "1.1.0", Replaces: "jump.v1.0.0"},
				{Name: "jump.v2.0.0", Version: "2.0.0", Replaces: "jump.v1.1.0", SkipRange: ">=1.0.0 <2.0.0"}}},
			"broken": {"stable": {{Name: "broken.v1.0.0", Version: "1.0.0"}, {Name: "broken.v2.0.0", Version: "2.0.0", Replaces: "broken.v1.0.0"}}},
		}}}
	const ns = "olm-sim"
	for _, p := range []string{"chain", "jump", "broken"} {
		olm.Operator(t, ns, "cs-a", p, "stable", p+".v1.0.0")
	}
	olm.Start(t)

	ip := waitPlan(t, d, ns, "chain", "chain.v1.1.0")
	if got := field(ip, "status", "phase"); got != "RequiresApproval" || field(ip, "spec", "approval") != "Manual" {
		t.Errorf("InstallPlan %s: phase %q approval %q, want RequiresApproval, Manual", ip.GetName(), got, field(ip, "spec", "approval"))
	}
	if s := get(t, d, clustertest.Subscriptions, ns, "chain"); field(s, "status", "state") != "UpgradePending" ||
		field(s, "status", "currentCSV") != "chain.v1.1.0" || field(s, "status", "installedCSV") != "chain.v1.0.0" ||
		field(s, "status", "installPlanRef", "name") != ip.GetName() {
		t.Errorf("Subscription chain status %v", s.Object["status"])
	}
	jump := waitPlan(t, d, ns, "jump", "jump.v2.0.0") // the skipRange, not the replaces step to 1.1.0
	broken := waitPlan(t, d, ns, "broken", "broken.v2.0.0")
	time.Sleep(200 * time.Millisecond)
	if got := field(get(t, d, clustertest.ClusterServiceVersions, ns, "chain.v1.0.0"), "status", "phase"); got != "Succeeded" {
		t.Errorf("unapproved: chain.v1.0.0 phase %q", got)
	}
	for _, x := range []*unstructured.Unstructured{ip, jump, broken} {
		if _, err := d.Resource(clustertest.InstallPlans).Namespace(ns).Patch(context.Background(), x.GetName(), "application/merge-patch+json",
			[]byte(`{"spec":{"approved":true}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, w := range []struct{ sub, csv string }{{"chain", "chain.v1.1.0"}, {"jump", "jump.v2.0.0"}} {
		eventually(t, w.sub+" at "+w.csv, func() bool {
			s := get(t, d, clustertest.Subscriptions, ns, w.sub)
			c, err := d.Resource(clustertest.ClusterServiceVersions).Namespace(ns).Get(context.Background(), w.csv, metav1.GetOptions{})
			return err == nil && field(c, "status", "phase") == "Succeeded" && field(s, "status", "installedCSV") == w.csv
		})
		if _, err := d.Resource(clustertest.ClusterServiceVersions).Namespace(ns).Get(context.Background(), w.sub+".v1.0.0", metav1.GetOptions{}); err == nil {
			t.Errorf("%s.v1.0.0 not removed once replaced", w.sub)
		}
	}
	if got := field(get(t, d, clustertest.InstallPlans, ns, ip.GetName()), "status", "phase"); got != "Complete" {
		t.Errorf("approved InstallPlan %s phase %q, want Complete", ip.GetName(), got)
	}
	waitPlan(t, d, ns, "chain", "chain.v1.2.0") // the next step, its own InstallPlan
	eventually(t, "the broken InstallPlan Failed", func() bool {
		return field(get(t, d, clustertest.InstallPlans, ns, broken.GetName()), "status", "phase") == "Failed"
	})
	if s := get(t, d, clustertest.Subscriptions, ns, "broken"); field(s, "status", "installedCSV") != "broken.v1.0.0" {
		t.Errorf("a failed InstallPlan moved the Subscription: %v", s.Object["status"])
	}
	if s := get(t, d, clustertest.Subscriptions, ns, "jump"); field(s, "status", "state") != "AtLatestKnown" {
		t.Errorf("jump at its channel head: state %q, want AtLatestKnown", field(s, "status", "state"))
	}
}

// waitPlan waits for the InstallPlan of sub naming csv.
func waitPlan(t *testing.T, d dynamic.Interface, ns, sub, csv string) *unstructured.Unstructured {
	t.Helper()
	var found *unstructured.Unstructured
	eventually(t, "an InstallPlan naming "+csv, func() bool {
		l, err := d.Resource(clustertest.InstallPlans).Namespace(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return false
		}
		for i := range l.Items {
			names, _, _ := unstructured.NestedStringSlice(l.Items[i].Object, "spec", "clusterServiceVersionNames")
			owners := l.Items[i].GetOwnerReferences()
			if len(names) == 1 && names[0] == csv && len(owners) == 1 && owners[0].Name == sub && field(&l.Items[i], "status", "phase") != "" {
				found = &l.Items[i]
				return true
			}
		}
		return false
	})
	return found
}

func eventually(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func get(t *testing.T, d dynamic.Interface, gvr schema.GroupVersionResource, ns, name string) *unstructured.Unstructured {
	t.Helper()
	u, err := d.Resource(gvr).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func field(u *unstructured.Unstructured, path ...string) string {
	s, _, _ := unstructured.NestedString(u.Object, path...)
	return s
}

// labOLM starts the simulated OLM with the operators the run tests plan to update, installed in
// the workload namespace a step below: gpu-operator-certified (v25.0.0 -> v25.3.0) and nfd
// (4.17.0-202501 -> 4.18.0-202507), their Subscriptions on Manual approval. The caller starts it:
// InstallPlans the test makes before naming those CSVs are the ones OLM carries out (it makes
// none of its own for them).
func labOLM(t *testing.T, l *lab) *upgradetest.OLM {
	t.Helper()
	olm := &upgradetest.OLM{D: l.d, Clock: l.clock, Catalogs: upgradetest.Catalogs{
		"certified-operators": {"gpu-operator-certified": {"stable": {{Name: "gpu-operator-certified.v25.0.0", Version: "25.0.0"},
			{Name: "gpu-operator-certified.v25.3.0", Version: "25.3.0", Replaces: "gpu-operator-certified.v25.0.0"}}}},
		"redhat-operators": {"nfd": {"stable": {{Name: "nfd.4.17.0-202501", Version: "4.17.0-202501"},
			{Name: "nfd.4.18.0-202507", Version: "4.18.0-202507", Replaces: "nfd.4.17.0-202501"}}}},
	}}
	olm.Operator(t, upgradetest.WorkloadNamespace, "certified-operators", "gpu-operator-certified", "stable", "gpu-operator-certified.v25.0.0")
	olm.Operator(t, upgradetest.WorkloadNamespace, "redhat-operators", "nfd", "stable", "nfd.4.17.0-202501")
	return olm
}
