package upgrade_test

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/bootstrap-dev/bootstrap/internal/cluster/clustertest"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade/upgradetest"
)

// Only the InstallPlans whose every CSV the plan names are approved, the hop's "before" ones
// ahead of desiredUpdate and its "after" ones once it closed; an InstallPlan naming a CSV the
// plan does not (alone or beside a planned one) stays unapproved and is named in the journal.
func TestRunApprovesOnlyThePlannedInstallPlans(t *testing.T) {
	l := newLab(t, upgradetest.LabOptions{Version: "4.17.10", Workers: []string{"w0", "w1"}}, upgradetest.Faults{})
	olm := labOLM(t, l)
	ips := l.d.Resource(clustertest.InstallPlans).Namespace(upgradetest.WorkloadNamespace)
	for name, csvs := range map[string][]any{
		"install-gpu":       {"gpu-operator-certified.v25.3.0"},
		"install-nfd":       {"nfd.4.18.0-202507"},
		"install-unplanned": {"cert-manager.v1.16.1"},
		"install-mixed":     {"gpu-operator-certified.v25.3.0", "sriov-network-operator.v4.18.0"},
	} {
		ip := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "operators.coreos.com/v1alpha1", "kind": "InstallPlan",
			"metadata": map[string]any{"name": name, "namespace": upgradetest.WorkloadNamespace},
			"spec":     map[string]any{"approval": "Manual", "approved": false, "clusterServiceVersionNames": csvs}}}
		if _, err := ips.Create(context.Background(), ip, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = ips.Delete(context.Background(), name, metav1.DeleteOptions{}) })
	}
	olm.Start(t) // it carries out the approved InstallPlans above, and makes none of its own for their CSVs
	j := &upgradetest.Journal{}
	o := l.opts(t)
	o.Hop.Before = []upgrade.Step{{Subject: "gpu-operator", Action: "update", CSV: "gpu-operator-certified.v25.3.0"}}
	o.Hop.After = []upgrade.Step{{Subject: "nfd", Action: "update", CSV: "nfd.4.18.0-202507"}}
	o.Mirror = []*unstructured.Unstructured{
		{Object: map[string]any{"apiVersion": "config.openshift.io/v1", "kind": "ImageDigestMirrorSet", "metadata": map[string]any{"name": "idms-release-0"},
			"spec": map[string]any{"imageDigestMirrors": []any{map[string]any{"source": "quay.io/openshift-release-dev/ocp-release",
				"mirrors": []any{"registry.site.example:8443/openshift/release-images"}}}}}},
		{Object: map[string]any{"apiVersion": "operators.coreos.com/v1alpha1", "kind": "CatalogSource",
			"metadata": map[string]any{"name": "cs-redhat-operator-index-v4-18", "namespace": upgradetest.WorkloadNamespace},
			"spec":     map[string]any{"sourceType": "grpc", "image": "registry.site.example:8443/redhat/redhat-operator-index:v4.18"}}},
	}
	approvedAt := map[string]bool{}
	o.Crash = func(step string) error {
		if step == upgrade.StepDesired {
			for _, n := range []string{"install-gpu", "install-nfd"} {
				u, _ := ips.Get(context.Background(), n, metav1.GetOptions{})
				approvedAt[n], _, _ = unstructured.NestedBool(u.Object, "spec", "approved")
			}
		}
		return nil
	}
	if _, err := upgrade.Run(context.Background(), l.c, j, o); err != nil {
		t.Fatal(err)
	}
	if !approvedAt["install-gpu"] || approvedAt["install-nfd"] {
		t.Errorf("when desiredUpdate was set: %v, want install-gpu approved, install-nfd not yet", approvedAt)
	}
	for name, want := range map[string]bool{"install-gpu": true, "install-nfd": true, "install-unplanned": false, "install-mixed": false} {
		u, err := ips.Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got, _, _ := unstructured.NestedBool(u.Object, "spec", "approved"); got != want {
			t.Errorf("InstallPlan %s approved=%v, want %v", name, got, want)
		}
	}
	if _, err := l.d.Resource(clustertest.CatalogSources).Namespace(upgradetest.WorkloadNamespace).Get(context.Background(), "cs-redhat-operator-index-v4-18", metav1.GetOptions{}); err != nil {
		t.Errorf("the next minor's CatalogSource was not applied: %v", err)
	}
	if j.Keys[3] != "4.18.5/"+upgrade.StepMirror || j.Keys[4] != "4.18.5/"+upgrade.StepInstallPlans || j.Keys[5] != "4.18.5/"+upgrade.StepSubscriptions {
		t.Errorf("journal %v: the mirror config, then the InstallPlans, then the Subscriptions' move", j.Keys)
	}
	var before upgrade.InstallPlans
	j.Done("4.18.5/"+upgrade.StepInstallPlans, &before)
	left := strings.Join(before.Left, "\n")
	if len(before.Approved) != 1 || !strings.Contains(left, "install-mixed: CSVs the plan does not name: sriov-network-operator.v4.18.0") ||
		!strings.Contains(left, "install-unplanned: CSVs the plan does not name: cert-manager.v1.16.1") {
		t.Errorf("journaled approval before the hop: %+v", before)
	}
}
