//go:build e2e

package e2e

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/bootstrap-dev/bootstrap/e2e/lab/harness"
)

// checkArgoCDOwnsSite checks, after a run through handoff, what Argo CD's own controllers did with
// the lab's repository: every Application Synced and Healthy by their account (the root, its
// children, one per tenant from the ApplicationSet), and in the API server the tenant namespaces,
// quotas, role bindings and network policies, the operators' Subscriptions, carrying Argo CD's
// tracking label and annotation.
func checkArgoCDOwnsSite(t *testing.T, l *testLab) {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(l.Dir, harness.ClusterDir, "kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	d, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	get := func(gvr schema.GroupVersionResource, ns, name string) *unstructured.Unstructured {
		t.Helper()
		u, err := d.Resource(gvr).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Errorf("%s %s/%s: %v", gvr.Resource, ns, name, err)
			return nil
		}
		return u
	}
	str := func(u *unstructured.Unstructured, path ...string) string {
		s, _, _ := unstructured.NestedString(u.Object, path...)
		return s
	}
	// tracked checks Argo CD's tracking of u by Application app.
	tracked := func(u *unstructured.Unstructured, app string) {
		t.Helper()
		if u == nil {
			return
		}
		if id := u.GetAnnotations()["argocd.argoproj.io/tracking-id"]; !strings.HasPrefix(id, app+":") || u.GetLabels()["app.kubernetes.io/instance"] != app {
			t.Errorf("%s %s/%s: tracking label %q, annotation %q; want Argo CD's tracking by %s", u.GetKind(), u.GetNamespace(), u.GetName(),
				u.GetLabels()["app.kubernetes.io/instance"], id, app)
		}
	}
	apps := schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "applications"}
	want := []string{"root", "operators", "infra"}
	for _, tn := range harness.Tenants {
		want = append(want, "tenant-"+tn.Name)
	}
	for _, name := range want {
		if a := get(apps, "openshift-gitops", name); a != nil {
			if s, h := str(a, "status", "sync", "status"), str(a, "status", "health", "status"); s != "Synced" || h != "Healthy" {
				t.Errorf("Application %s: sync %q health %q; want Synced and Healthy", name, s, h)
			}
		}
	}
	gvr := func(group, version, resource string) schema.GroupVersionResource {
		return schema.GroupVersionResource{Group: group, Version: version, Resource: resource}
	}
	for _, tn := range harness.Tenants {
		ns, app := "tenant-"+tn.Name, "tenant-"+tn.Name
		tracked(get(gvr("", "v1", "namespaces"), "", ns), app)
		q := get(gvr("", "v1", "resourcequotas"), ns, "gpu")
		tracked(q, app)
		if q != nil {
			hard, _, _ := unstructured.NestedStringMap(q.Object, "spec", "hard")
			if hard["requests.nvidia.com/gpu"] != strconv.Itoa(tn.GPUs) || hard["limits.nvidia.com/gpu"] != strconv.Itoa(tn.GPUs) {
				t.Errorf("ResourceQuota %s/gpu: %v; want %d GPUs", ns, hard, tn.GPUs)
			}
		}
		tracked(get(gvr("networking.k8s.io", "v1", "networkpolicies"), ns, "same-namespace-only"), app)
		rb := get(gvr("rbac.authorization.k8s.io", "v1", "rolebindings"), ns, "tenant-admins")
		tracked(rb, app)
		if rb != nil {
			subj, _, _ := unstructured.NestedSlice(rb.Object, "subjects")
			if len(subj) != 1 || subj[0].(map[string]any)["name"] != tn.Admins {
				t.Errorf("RoleBinding %s/tenant-admins subjects %v; want group %s", ns, subj, tn.Admins)
			}
		}
	}
	subs := gvr("operators.coreos.com", "v1alpha1", "subscriptions")
	for _, s := range [][2]string{{"nvidia-gpu-operator", "gpu-operator-certified"}, {"nvidia-network-operator", "nvidia-network-operator"},
		{"openshift-sriov-network-operator", "sriov-network-operator"}} {
		tracked(get(subs, s[0], s[1]), "operators")
	}
	sc := get(gvr("storage.k8s.io", "v1", "storageclasses"), "", "local-nvme")
	tracked(sc, "infra")
	if sc != nil && sc.GetAnnotations()["storageclass.kubernetes.io/is-default-class"] != "true" {
		t.Errorf("StorageClass local-nvme: annotations %v; want the prod overlay's default-class patch", sc.GetAnnotations())
	}
}
