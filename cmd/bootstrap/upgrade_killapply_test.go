package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/bootstrap-dev/bootstrap/internal/cluster/clustertest"
	"github.com/bootstrap-dev/bootstrap/internal/mirror"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade/upgradetest"
)

// The writes of the hop's first steps, as requests at the tap.
const (
	killSigCM = "PATCH /api/v1/namespaces/openshift-config-managed/configmaps/" + mirror.SignatureConfigMapName
	killIDMS  = "PATCH /apis/config.openshift.io/v1/imagedigestmirrorsets/idms-release-0"
	killCS    = "PATCH /apis/operators.coreos.com/v1alpha1/namespaces/" + upgrade.MarketplaceNamespace + "/catalogsources/cs-redhat-operator-index-v4-18"
	killSub   = "PATCH /apis/operators.coreos.com/v1alpha1/namespaces/" + upgradetest.WorkloadNamespace + "/subscriptions/gpu"
)

// `upgrade run` killed with SIGKILL right after each server-side apply of the signatures and
// mirror-config steps (the signature ConfigMap, the IDMS, the next minor's CatalogSource) and
// after the subscriptions step's patch reached the API server, then resumed. What is asserted,
// from the tap's record of each write's answer: the resume made no write that CHANGED an
// applied object — every apply of it was answered with the same resourceVersion (a repeated
// apply of identical content, which the resume does make, is a no-op at the server and is
// allowed); the Subscription, whose step reads before it writes, is not even re-requested:
// one PATCH in all.
func TestUpgradeRunKilledAtEachApply(t *testing.T) {
	var srv clustertest.Server
	t.Cleanup(srv.Stop)
	cfg := srv.Config(t)
	d := clustertest.Dynamic(t, cfg)
	for _, tc := range []struct {
		step, write string
	}{
		{upgrade.StepSignatures, killSigCM},
		{upgrade.StepMirror, killIDMS},
		{upgrade.StepMirror, killCS},
		{upgrade.StepSubscriptions, killSub},
	} {
		t.Run(tc.step+"/"+tc.write[strings.LastIndex(tc.write, "/")+1:], func(t *testing.T) {
			clock := &upgradetest.Clock{Factor: 1200}
			upgradetest.Lab(t, d, upgradetest.LabOptions{Version: "4.17.10", Workers: []string{"w0", "w1"}}, clock)
			operatorLab(t, d)
			sim := &upgradetest.Sim{D: d, Clock: clock}
			sim.Start(t)
			sim.Settle(t)
			tap := upgradetest.NewTap(t, cfg)
			var child atomic.Int64
			tap.OnWrite = func(w string, n int) {
				if w == tc.write && n == 1 {
					_ = syscall.Kill(int(child.Load()), syscall.SIGKILL)
				}
			}
			dir := t.TempDir()
			kc := filepath.Join(dir, "kubeconfig")
			if err := os.WriteFile(kc, tap.Kubeconfig(), 0o600); err != nil {
				t.Fatal(err)
			}
			out := hopResources(t, filepath.Join(dir, "mirror"))
			hop := upgrade.Hop{From: "4.17.10", To: "4.18.5", Payload: upgradetest.Payload("4.18.5"),
				Subscriptions: []upgrade.SubscriptionMove{{Namespace: upgradetest.WorkloadNamespace, Name: "gpu", From: "cs-redhat-operator-index-v4-17",
					To: "cs-redhat-operator-index-v4-18", SourceNamespace: upgrade.MarketplaceNamespace}}}
			plan, _ := json.Marshal(upgrade.Plan{From: "4.17.10", To: "4.18.5", Hops: []upgrade.Hop{hop}})
			pf := filepath.Join(dir, "plan.json")
			if err := os.WriteFile(pf, plan, 0o644); err != nil {
				t.Fatal(err)
			}
			args, _ := json.Marshal([]string{"--dir", filepath.Join(dir, ".bootstrap"), "upgrade", "run", "--plan", pf, "--kubeconfig", kc,
				"--signatures", out, "--mirror-config", out, "--soak", "0s", "--poll", "50ms",
				"--accept-rollback-contract", "Jane Doe", "--no-etcd-backup", "the lab has no etcd"})
			if killed, code, o := runUpgradeChild(t, args, &child); !killed {
				t.Fatalf("first run: exit %d, not killed at %s\n%s", code, tc.write, o)
			}
			if n := tap.Count(tc.write); n != 1 {
				t.Fatalf("%d requests %s before the kill, want 1", n, tc.write)
			}
			if killed, code, o := runUpgradeChild(t, args, &child); killed || code != 0 {
				t.Fatalf("resumed run: killed %v exit %d\n%s", killed, code, o)
			}
			for _, w := range []string{killSigCM, killIDMS, killCS} {
				vs := tap.Versions(w)
				if len(vs) == 0 || vs[0] == "" {
					t.Errorf("%s: no write answered with a resourceVersion (%v)", w, vs)
					continue
				}
				for _, v := range vs[1:] {
					if v != vs[0] {
						t.Errorf("%s changed the object again after a kill at %s: resourceVersions %v", w, tc.write, vs)
						break
					}
				}
				if w == tc.write && len(vs) != 2 {
					t.Errorf("%s: %d applies, want 2 (the killed one, re-applied unchanged by the resume)", w, len(vs))
				}
			}
			if n := tap.Count(killSub); n != 1 {
				t.Errorf("Subscription patched %d times after a kill at %s, want 1 (the resume reads it first)", n, tc.write)
			}
			j, err := os.ReadFile(filepath.Join(dir, ".bootstrap", "upgrade", "journal.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			if n := bytes.Count(j, []byte(`"step":"4.18.5/`+tc.step+`"`)); n != 1 {
				t.Errorf("%s journaled %d times", tc.step, n)
			}
			if tc.step == upgrade.StepSubscriptions && !bytes.Contains(j, []byte(`"alreadyMoved":["workload/gpu: cs-redhat-operator-index-v4-18"]`)) {
				t.Errorf("the resume did not journal the Subscription as found moved:\n%s", j)
			}
		})
	}
}

// operatorLab adds the Subscription the hop moves and its target CatalogSource, READY (as OLM's
// catalog operator reports a registry that answers), removed when the test ends.
func operatorLab(t *testing.T, d dynamic.Interface) {
	t.Helper()
	ctx := context.Background()
	_, err := d.Resource(clustertest.Namespaces).Create(ctx, &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace",
		"metadata": map[string]any{"name": upgrade.MarketplaceNamespace}}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	idms := clustertest.GVR("config.openshift.io", "v1", "imagedigestmirrorsets")
	tidy := func() {
		_ = d.Resource(clustertest.Subscriptions).Namespace(upgradetest.WorkloadNamespace).Delete(ctx, "gpu", metav1.DeleteOptions{})
		_ = d.Resource(clustertest.CatalogSources).Namespace(upgrade.MarketplaceNamespace).Delete(ctx, "cs-redhat-operator-index-v4-18", metav1.DeleteOptions{})
		_ = d.Resource(idms).Delete(ctx, "idms-release-0", metav1.DeleteOptions{})
	}
	tidy()
	t.Cleanup(tidy)
	clustertest.Create(t, d, clustertest.Subscriptions, map[string]any{"apiVersion": "operators.coreos.com/v1alpha1", "kind": "Subscription",
		"metadata": map[string]any{"name": "gpu", "namespace": upgradetest.WorkloadNamespace},
		"spec": map[string]any{"name": "gpu-operator-certified", "channel": "v25.3", "source": "cs-redhat-operator-index-v4-17",
			"sourceNamespace": upgrade.MarketplaceNamespace}})
	clustertest.Create(t, d, clustertest.CatalogSources, map[string]any{"apiVersion": "operators.coreos.com/v1alpha1", "kind": "CatalogSource",
		"metadata": map[string]any{"name": "cs-redhat-operator-index-v4-18", "namespace": upgrade.MarketplaceNamespace},
		"spec":     map[string]any{"sourceType": "grpc"}})
	clustertest.MustSetStatus(t, d, clustertest.CatalogSources, upgrade.MarketplaceNamespace, "cs-redhat-operator-index-v4-18",
		map[string]any{"connectionState": map[string]any{"lastObservedState": "READY"}}, true)
}

// hopResources writes the hop's signature ConfigMap, IDMS and next-minor CatalogSource into dir,
// as the mirror writes its outputs.
func hopResources(t *testing.T, dir string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := upgradetest.Payload("4.18.5")
	if _, err := mirror.WriteSignatureConfigMap(dir, []mirror.ReleaseSignatures{{Digest: p[strings.LastIndex(p, "@")+1:], Signatures: [][]byte{[]byte("throwaway signature")}}}); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		mirror.IDMSFile: `apiVersion: config.openshift.io/v1
kind: ImageDigestMirrorSet
metadata: {name: idms-release-0}
spec:
  imageDigestMirrors:
  - source: quay.io/openshift-release-dev/ocp-release
    mirrors: [registry.site.example:8443/openshift/release-images]
`,
		"cs-redhat-operator-index-v4-18.yaml": `apiVersion: operators.coreos.com/v1alpha1
kind: CatalogSource
metadata: {name: cs-redhat-operator-index-v4-18, namespace: openshift-marketplace}
spec:
  sourceType: grpc
  image: registry.site.example:8443/redhat/redhat-operator-index:v4.18
`,
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
