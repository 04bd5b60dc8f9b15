package argocdtest

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

var (
	namespaces  = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	configMaps  = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	secrets     = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	appProjects = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "appprojects"}
)

// partOf is the label Argo CD's settings informers select ConfigMaps and Secrets by.
var partOf = map[string]any{"app.kubernetes.io/part-of": "argocd"}

// TrackingMethod is how the instance marks what it applies: the argocd.argoproj.io/tracking-id
// annotation, plus the app.kubernetes.io/instance label for people and tools that select by it.
const TrackingMethod = "annotation+label"

// Config creates, where missing, what an Argo CD instance reads in its namespace: the namespace,
// argocd-cm, argocd-rbac-cm, argocd-cmd-params-cm, the three ConfigMaps mounted as files
// (TLS certificates, SSH known hosts, GnuPG keys: empty until the handoff writes them),
// argocd-secret with a server signing key, and the default AppProject (any source, any
// destination, as Argo CD's own default project). Objects that exist are left alone, so what the
// handoff wrote stays.
func Config(ctx context.Context, d dynamic.Interface, ns string) error {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return err
	}
	cm := func(name string, data map[string]any) map[string]any {
		return map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": name, "namespace": ns, "labels": partOf}, "data": data}
	}
	objs := []struct {
		gvr schema.GroupVersionResource
		obj map[string]any
	}{
		{namespaces, map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}},
		{configMaps, cm("argocd-cm", map[string]any{"application.resourceTrackingMethod": TrackingMethod})},
		{configMaps, cm("argocd-rbac-cm", map[string]any{})},
		{configMaps, cm("argocd-cmd-params-cm", map[string]any{})},
		{configMaps, cm("argocd-tls-certs-cm", map[string]any{})},
		{configMaps, cm("argocd-ssh-known-hosts-cm", map[string]any{})},
		{configMaps, cm("argocd-gpg-keys-cm", map[string]any{})},
		{secrets, map[string]any{"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
			"metadata": map[string]any{"name": "argocd-secret", "namespace": ns, "labels": partOf},
			"data":     map[string]any{"server.secretkey": base64.StdEncoding.EncodeToString(key)}}},
		{appProjects, map[string]any{"apiVersion": "argoproj.io/v1alpha1", "kind": "AppProject",
			"metadata": map[string]any{"name": "default", "namespace": ns},
			"spec": map[string]any{
				"sourceRepos":              []any{"*"},
				"destinations":             []any{map[string]any{"server": "*", "namespace": "*"}},
				"clusterResourceWhitelist": []any{map[string]any{"group": "*", "kind": "*"}},
			}}},
	}
	for _, o := range objs {
		u := &unstructured.Unstructured{Object: o.obj}
		r := d.Resource(o.gvr).Namespace(u.GetNamespace())
		if _, err := r.Create(ctx, u, metav1.CreateOptions{FieldManager: "argocdtest"}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("argo cd config: create %s %s: %w", u.GetKind(), u.GetName(), err)
		}
	}
	return nil
}
