// Package clustertest starts a real kube-apiserver and etcd (built by scripts/testbin.sh) through
// controller-runtime's envtest, with the real OpenShift, OLM and Argo CD CRDs installed, and gives
// tests small helpers to play the controllers by writing status.
//
// When the binaries are missing, tests fail (not skip) and say to run `make testbin`.
package clustertest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// Versions of the binaries scripts/testbin.sh builds; keep in step with it.
const (
	K8sVersion  = "1.37.2"
	EtcdVersion = "3.7.3"
)

// Dir returns the directory holding kube-apiserver, etcd and crds/: $KUBEBUILDER_ASSETS when set,
// else $BOOTSTRAP_TESTBIN_ROOT (default /var/cache/bootstrap/testbin)/k8s-<v>_etcd-<v>.
func Dir() string {
	if d := os.Getenv("KUBEBUILDER_ASSETS"); d != "" {
		return d
	}
	root := os.Getenv("BOOTSTRAP_TESTBIN_ROOT")
	if root == "" {
		root = "/var/cache/bootstrap/testbin"
	}
	return filepath.Join(root, "k8s-"+K8sVersion+"_etcd-"+EtcdVersion)
}

// Missing says what is missing from Dir, or "" when everything is there.
func Missing() string {
	d := Dir()
	for _, f := range []string{"kube-apiserver", "etcd", "crds/.complete"} {
		if _, err := os.Stat(filepath.Join(d, f)); err != nil {
			return fmt.Sprintf("%s not found in %s: run `make testbin` (scripts/testbin.sh builds kube-apiserver and etcd and fetches the CRDs)", f, d)
		}
	}
	return ""
}

// Server is one API server shared by the tests of a package. Start it lazily with Config and stop
// it from TestMain with Stop.
type Server struct {
	once sync.Once
	env  *envtest.Environment
	cfg  *rest.Config
	err  error
	// Took is how long start-up (with CRDs) took.
	Took time.Duration
}

// Config starts the server on first use and returns its rest.Config; the test fails when the
// server cannot start (including when the binaries were not built).
func (s *Server) Config(t testing.TB) *rest.Config {
	t.Helper()
	s.once.Do(func() {
		if m := Missing(); m != "" {
			s.err = fmt.Errorf("%s", m)
			return
		}
		start := time.Now()
		// envtest logs through controller-runtime's logger; without one it prints a warning with a
		// stack trace. Tests have no use for its logs.
		log.SetLogger(logr.Discard())
		s.env = &envtest.Environment{
			BinaryAssetsDirectory: Dir(),
			CRDDirectoryPaths:     []string{filepath.Join(Dir(), "crds")},
			ErrorIfCRDPathMissing: true,
			// The defaults (20 s, 10 s) are too short for the OLM and Argo CD CRDs on a busy 2-core
			// machine, where start-up with all CRDs took 10–24 s.
			ControlPlaneStartTimeout: 90 * time.Second,
			ControlPlaneStopTimeout:  30 * time.Second,
			CRDInstallOptions:        envtest.CRDInstallOptions{MaxTime: 90 * time.Second},
		}
		s.cfg, s.err = s.env.Start()
		s.Took = time.Since(start)
	})
	if s.err != nil {
		t.Fatalf("kube-apiserver: %v", s.err)
	}
	return s.cfg
}

// Stop stops the server if it was started.
func (s *Server) Stop() {
	if s.env != nil && s.cfg != nil {
		_ = s.env.Stop()
	}
}

// Dynamic returns a dynamic client for cfg.
func Dynamic(t testing.TB, cfg *rest.Config) dynamic.Interface {
	t.Helper()
	d, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// GVR is a shorthand for schema.GroupVersionResource.
func GVR(group, version, resource string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: group, Version: version, Resource: resource}
}

// Create creates obj (failing the test on error) and returns what the server stored.
func Create(t testing.TB, d dynamic.Interface, gvr schema.GroupVersionResource, obj map[string]any) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{Object: obj}
	out, err := d.Resource(gvr).Namespace(u.GetNamespace()).Create(context.Background(), u, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create %s %s: %v", gvr.Resource, u.GetName(), err)
	}
	return out
}

// SetStatus plays a controller: it reads the object, sets status to the given value and writes it
// through the status subresource (subresource true) or a plain update (Argo CD's Application has
// no status subresource). Conflicts are retried. Safe to call from any goroutine.
func SetStatus(d dynamic.Interface, gvr schema.GroupVersionResource, ns, name string, status map[string]any, subresource bool) error {
	ctx := context.Background()
	for i := 0; ; i++ {
		u, err := d.Resource(gvr).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("get %s %s/%s: %w", gvr.Resource, ns, name, err)
		}
		u.Object["status"] = status
		if subresource {
			_, err = d.Resource(gvr).Namespace(ns).UpdateStatus(ctx, u, metav1.UpdateOptions{})
		} else {
			_, err = d.Resource(gvr).Namespace(ns).Update(ctx, u, metav1.UpdateOptions{})
		}
		if err == nil {
			return nil
		}
		if i > 5 {
			return fmt.Errorf("set status of %s %s/%s: %w", gvr.Resource, ns, name, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// MustSetStatus is SetStatus that fails the test; call it from the test goroutine only.
func MustSetStatus(t testing.TB, d dynamic.Interface, gvr schema.GroupVersionResource, ns, name string, status map[string]any, subresource bool) {
	t.Helper()
	if err := SetStatus(d, gvr, ns, name, status, subresource); err != nil {
		t.Fatal(err)
	}
}

// Kubeconfig returns a kubeconfig file's bytes for the started server (Config must have run).
func (s *Server) Kubeconfig(t testing.TB) []byte {
	t.Helper()
	s.Config(t)
	return s.env.KubeConfig
}

// InstallCRD installs crd into the server cfg points at, waits until it is served, and removes it
// at the end of the test. It is for kinds whose real CRD no module the proxy serves carries.
func InstallCRD(t testing.TB, cfg *rest.Config, crd *apiextensionsv1.CustomResourceDefinition) {
	t.Helper()
	crds, err := envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{CRDs: []*apiextensionsv1.CustomResourceDefinition{crd}, MaxTime: 90 * time.Second})
	if err != nil {
		t.Fatalf("install CRD %s: %v", crd.Name, err)
	}
	t.Cleanup(func() {
		if err := envtest.UninstallCRDs(cfg, envtest.CRDInstallOptions{CRDs: crds, MaxTime: 90 * time.Second}); err != nil {
			t.Errorf("uninstall CRD %s: %v", crd.Name, err)
		}
	})
}

// ArgoCDCRD stands in for the GitOps operator's argocds.argoproj.io CRD, which no module the Go
// proxy serves carries (argoproj-labs/argocd-operator and redhat-developer/gitops-operator are
// not served): same group, kind, scope, served version and status subresource; the status fields
// the handoff reads (phase, server, repo, applicationController, redis, host, conditions) are
// declared with the types argocd-operator's api/v1beta1 ArgoCDStatus gives them, the rest is
// preserved as is.
func ArgoCDCRD() *apiextensionsv1.CustomResourceDefinition {
	str := apiextensionsv1.JSONSchemaProps{Type: "string"}
	preserve := true
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "argocds.argoproj.io"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "argoproj.io",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: "ArgoCD", ListKind: "ArgoCDList", Plural: "argocds", Singular: "argocd"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1beta1", Served: true, Storage: true,
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec": {Type: "object", XPreserveUnknownFields: &preserve},
						"status": {Type: "object", XPreserveUnknownFields: &preserve, Properties: map[string]apiextensionsv1.JSONSchemaProps{
							"phase": str, "server": str, "repo": str, "applicationController": str, "redis": str,
							"applicationSetController": str, "sso": str, "notificationsController": str, "host": str,
							"conditions": {Type: "array", Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{
								Type: "object", XPreserveUnknownFields: &preserve}}},
						}},
					},
				}},
			}},
		},
	}
}

// DeploymentStatus is what kube-controller-manager's deployment controller writes for a
// Deployment of one replica at the given generation: "available" (rolled out), "progressing"
// (waiting for its pod) or "deadline" (the rollout passed its progressDeadlineSeconds). Tests
// play the controller with it where nothing runs pods.
func DeploymentStatus(name string, generation int64, state string) map[string]any {
	cond := func(typ, status, reason, msg string) map[string]any {
		return map[string]any{"type": typ, "status": status, "reason": reason, "message": msg}
	}
	st := map[string]any{"observedGeneration": generation, "replicas": int64(1), "updatedReplicas": int64(1)}
	switch state {
	case "available":
		st["readyReplicas"], st["availableReplicas"] = int64(1), int64(1)
		st["conditions"] = []any{cond("Available", "True", "MinimumReplicasAvailable", "Deployment has minimum availability."),
			cond("Progressing", "True", "NewReplicaSetAvailable", fmt.Sprintf("ReplicaSet %q has successfully progressed.", name+"-5d8f7c9b6"))}
	case "deadline":
		st["unavailableReplicas"] = int64(1)
		st["conditions"] = []any{cond("Available", "False", "MinimumReplicasUnavailable", "Deployment does not have minimum availability."),
			cond("Progressing", "False", "ProgressDeadlineExceeded", fmt.Sprintf("ReplicaSet %q has timed out progressing.", name+"-5d8f7c9b6"))}
	default:
		st["unavailableReplicas"] = int64(1)
		st["conditions"] = []any{cond("Available", "False", "MinimumReplicasUnavailable", "Deployment does not have minimum availability."),
			cond("Progressing", "True", "ReplicaSetUpdated", fmt.Sprintf("ReplicaSet %q is progressing.", name+"-5d8f7c9b6"))}
	}
	return st
}

// DeploymentYAML is the manifest of a one-replica Deployment (namespace "" leaves it to the
// applier), for repositories that tests serve to Argo CD; DeploymentStatus plays its controller.
func DeploymentYAML(name, namespace string) string {
	ns := ""
	if namespace != "" {
		ns = "\n  namespace: " + namespace
	}
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: %[1]s%[2]s
spec:
  replicas: 1
  selector:
    matchLabels: {app: %[1]s}
  template:
    metadata:
      labels: {app: %[1]s}
    spec:
      containers:
      - name: manager
        image: registry.site.example:8443/%[1]s:v1
`, name, ns)
}
