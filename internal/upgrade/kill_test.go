package upgrade_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/bootstrap-dev/bootstrap/internal/cluster/clustertest"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade/upgradetest"
)

// A run killed after each step's work (its cluster writes) and before its journal record, then
// resumed: the hop completes, every step is journaled once, and every write reached the cluster
// exactly once — counted by the client's change hook, where an apply that left an object as it
// was is no write: the signature ConfigMap, the IDMS and CatalogSource created once, each planned
// InstallPlan approved once, the canary pool created and deleted once, the canary node labelled
// and unlabelled once, the worker pool paused and unpaused once each, the MachineHealthCheck
// paused and resumed once each, the Subscription moved to the next minor's CatalogSource once,
// spec.desiredUpdate set once.
func TestRunKilledAtEveryStepWritesOnce(t *testing.T) {
	clustertest.InstallCRD(t, server.Config(t), upgradetest.MachineHealthCheckCRD())
	sig := signatures(t, "4.18.5")
	want := map[string]int{
		"ConfigMap openshift-config-managed/" + sig[0].GetName() + " created":   1,
		"ImageDigestMirrorSet/idms-kill-0 created":                              1,
		"CatalogSource " + upgradetest.WorkloadNamespace + "/cs-kill created":   1,
		"InstallPlan " + upgradetest.WorkloadNamespace + "/install-gpu patched": 1,
		"InstallPlan " + upgradetest.WorkloadNamespace + "/install-nfd patched": 1,
		"MachineConfigPool/worker-canary created":                               1,
		"MachineConfigPool/worker-canary deleted":                               1,
		"Node/w0 patched":                  2, // labelled into the canary pool, out again
		"MachineConfigPool/worker patched": 2, // paused, unpaused
		"MachineHealthCheck " + upgrade.MachineAPINamespace + "/workers patched": 2,
		"ClusterVersion/version patched":                                         1,
		"Subscription " + upgradetest.WorkloadNamespace + "/gpu patched":         1,
	}
	steps := []string{upgrade.StepBackup, upgrade.StepSignatures, upgrade.StepMirror, upgrade.StepSubscriptions, upgrade.StepInstallPlans, upgrade.StepCanary,
		upgrade.StepPause, upgrade.StepHealthPause, upgrade.StepDesired, upgrade.StepControlPlane, upgrade.StepCanaryDone, upgrade.StepSoak,
		upgrade.StepUnpause, upgrade.StepWorkers, upgrade.StepClose, upgrade.StepAfterBackup, upgrade.StepAfterPlans}
	for _, step := range steps {
		t.Run(step, func(t *testing.T) {
			// the sim plays OLM's catalog operator: cs-kill turns READY once applied
			l := newLabSim(t, upgradetest.LabOptions{Version: "4.17.10", Workers: []string{"w0", "w1"}}, &upgradetest.Sim{Catalogs: true})
			killLab(t, l)
			opts := func() upgrade.RunOptions {
				o := l.opts(t)
				o.Soak = 0
				o.Signatures = signatures(t, "4.18.5")
				o.Mirror = killMirror()
				o.Hop.Before = []upgrade.Step{{Subject: "gpu-operator", Action: "update", CSV: "gpu-operator-certified.v25.3.0"}}
				o.Hop.After = []upgrade.Step{{Subject: "nfd", Action: "update", CSV: "nfd.4.18.0-202507"}}
				o.Hop.Subscriptions = []upgrade.SubscriptionMove{{Namespace: upgradetest.WorkloadNamespace, Name: "gpu",
					From: "cs-kill-v4-17", To: "cs-kill", SourceNamespace: upgradetest.WorkloadNamespace}}
				return o
			}
			j := &upgradetest.Journal{}
			o := opts()
			o.Crash = func(s string) error {
				if s == step {
					return errKilled
				}
				return nil
			}
			if _, err := upgrade.Run(context.Background(), l.c, j, o); !errors.Is(err, errKilled) {
				t.Fatalf("first run: %v, want the kill after %s", err, step)
			}
			if j.Done("4.18.5/"+step, nil) {
				t.Fatalf("%s journaled before the kill", step)
			}
			res, err := upgrade.Run(context.Background(), l.c, j, opts())
			if err != nil || !res.Done {
				t.Fatalf("resumed run: %v (journal %v)", err, j.Keys)
			}
			l.mu.Lock()
			got := fmt.Sprint(sortedCounts(l.writes))
			l.mu.Unlock()
			if w := fmt.Sprint(sortedCounts(want)); got != w {
				t.Errorf("writes after a kill at %s:\n got %s\nwant %s", step, got, w)
			}
			seen := map[string]int{}
			for _, k := range j.Keys {
				if !strings.Contains(k, "/"+upgrade.StepNodes+"/") {
					seen[k]++
				}
			}
			for k, n := range seen {
				if n != 1 {
					t.Errorf("%s journaled %d times", k, n)
				}
			}
			var ips upgrade.InstallPlans
			j.Done("4.18.5/"+upgrade.StepInstallPlans, &ips)
			if len(ips.Approved)+len(ips.Found) != 1 {
				t.Errorf("the journaled approval does not name install-gpu: %+v", ips)
			}
		})
	}
}

// killLab adds what the hop writes to besides the lab: a MachineHealthCheck, the planned
// InstallPlans (one before the hop, one after) and the simulated OLM that installs them once
// approved; it removes them, and the mirror config the hop
// applies, when the test ends.
func killLab(t *testing.T, l *lab) {
	t.Helper()
	ctx := context.Background()
	mhcs := l.d.Resource(upgradetest.MHCs).Namespace(upgrade.MachineAPINamespace)
	ips := l.d.Resource(clustertest.InstallPlans).Namespace(upgradetest.WorkloadNamespace)
	idms := l.d.Resource(schema.GroupVersionResource{Group: "config.openshift.io", Version: "v1", Resource: "imagedigestmirrorsets"})
	css := l.d.Resource(clustertest.CatalogSources).Namespace(upgradetest.WorkloadNamespace)
	tidy := func() {
		if old, err := mhcs.List(ctx, metav1.ListOptions{}); err == nil { // other tests' checks would be paused too
			for _, m := range old.Items {
				_ = mhcs.Delete(ctx, m.GetName(), metav1.DeleteOptions{})
			}
		}
		for _, n := range []string{"install-gpu", "install-nfd"} {
			_ = ips.Delete(ctx, n, metav1.DeleteOptions{})
		}
		_ = idms.Delete(ctx, "idms-kill-0", metav1.DeleteOptions{})
		_ = css.Delete(ctx, "cs-kill", metav1.DeleteOptions{})
		_ = l.d.Resource(clustertest.Subscriptions).Namespace(upgradetest.WorkloadNamespace).Delete(ctx, "gpu", metav1.DeleteOptions{})
	}
	tidy()
	t.Cleanup(tidy)
	olm := labOLM(t, l)
	defer olm.Start(t) // after the InstallPlans below: OLM carries them out
	clustertest.Create(t, l.d, upgradetest.MHCs, map[string]any{"apiVersion": "machine.openshift.io/v1beta1", "kind": "MachineHealthCheck",
		"metadata": map[string]any{"name": "workers", "namespace": upgrade.MachineAPINamespace}})
	clustertest.Create(t, l.d, clustertest.Subscriptions, map[string]any{"apiVersion": "operators.coreos.com/v1alpha1", "kind": "Subscription",
		"metadata": map[string]any{"name": "gpu", "namespace": upgradetest.WorkloadNamespace},
		"spec":     map[string]any{"name": "gpu-operator-certified", "channel": "v25.3", "source": "cs-kill-v4-17", "sourceNamespace": upgradetest.WorkloadNamespace}})
	for name, csv := range map[string]string{"install-gpu": "gpu-operator-certified.v25.3.0", "install-nfd": "nfd.4.18.0-202507"} {
		ip := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "operators.coreos.com/v1alpha1", "kind": "InstallPlan",
			"metadata": map[string]any{"name": name, "namespace": upgradetest.WorkloadNamespace},
			"spec":     map[string]any{"approval": "Manual", "approved": false, "clusterServiceVersionNames": []any{csv}}}}
		if _, err := ips.Create(ctx, ip, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

func killMirror() []*unstructured.Unstructured {
	return []*unstructured.Unstructured{
		{Object: map[string]any{"apiVersion": "config.openshift.io/v1", "kind": "ImageDigestMirrorSet", "metadata": map[string]any{"name": "idms-kill-0"},
			"spec": map[string]any{"imageDigestMirrors": []any{map[string]any{"source": "quay.io/openshift-release-dev/ocp-release",
				"mirrors": []any{"registry.site.example:8443/openshift/release-images"}}}}}},
		{Object: map[string]any{"apiVersion": "operators.coreos.com/v1alpha1", "kind": "CatalogSource",
			"metadata": map[string]any{"name": "cs-kill", "namespace": upgradetest.WorkloadNamespace},
			"spec":     map[string]any{"sourceType": "grpc", "image": "registry.site.example:8443/redhat/redhat-operator-index:v4.18"}}},
	}
}

func sortedCounts(m map[string]int) []string {
	var out []string
	for k, n := range m {
		out = append(out, fmt.Sprintf("%s x%d", k, n))
	}
	sort.Strings(out)
	return out
}
