package stages

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/bootstrap-dev/bootstrap/internal/cluster/clustertest"
	"github.com/bootstrap-dev/bootstrap/internal/handoff"
	"github.com/bootstrap-dev/bootstrap/internal/handoff/argocdtest"
)

// controllers plays OLM, the GitOps operator and kube-controller-manager's deployment
// controller against the real API server, one reconcile pass every 100 ms until stopped:
// CatalogSources READY; the Subscription resolved to a Manual InstallPlan; the CSV installed
// (Succeeded) once the plan is approved; the default Argo CD instance (Argo CD's own controllers,
// argocdtest, then the server Deployment Available with its Route); every other Deployment
// reported in the state SetDeployments last chose. Applications are Argo CD's alone.
type controllers struct {
	d          dynamic.Interface
	kubeconfig string
	dir        string
	argo       *argocdtest.Instance
	stop       context.CancelFunc
	done       chan error

	mu      sync.Mutex
	deploy  string            // the state Deployments are reported in (clustertest.DeploymentStatus)
	written map[string]string // Deployment -> state@generation last written
}

func startControllers(t *testing.T, d dynamic.Interface, kubeconfig string) *controllers {
	ctx, cancel := context.WithCancel(context.Background())
	p := &controllers{d: d, kubeconfig: kubeconfig, dir: t.TempDir(), stop: cancel, done: make(chan error, 1),
		deploy: "available", written: map[string]string{}}
	go func() {
		for {
			if err := p.pass(ctx); err != nil && ctx.Err() == nil {
				p.done <- err
				return
			}
			select {
			case <-ctx.Done():
				p.done <- nil
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	return p
}

// SetDeployments makes the played deployment controller report every Deployment (but Argo CD's
// server) as state from now on.
func (p *controllers) SetDeployments(state string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.deploy = state
}

// Stop stops the controllers and Argo CD and fails the test when one of them failed.
func (p *controllers) Stop(t *testing.T) {
	t.Helper()
	p.stop()
	err := <-p.done
	if serr := p.argo.Stop(); serr != nil {
		t.Errorf("stop argo cd: %v", serr)
	}
	if err != nil {
		t.Fatalf("controller player: %v", err)
	}
}

// deployments plays the deployment controller for the Deployments Argo CD applies.
func (p *controllers) deployments(ctx context.Context) error {
	list, err := p.d.Resource(clustertest.Deployments).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	p.mu.Lock()
	state := p.deploy
	p.mu.Unlock()
	for _, u := range list.Items {
		if u.GetNamespace() == handoff.ArgoNamespace {
			continue
		}
		key, want := u.GetNamespace()+"/"+u.GetName(), fmt.Sprintf("%s@%d", state, u.GetGeneration())
		if p.written[key] == want {
			continue
		}
		if err := clustertest.SetStatus(p.d, clustertest.Deployments, u.GetNamespace(), u.GetName(),
			clustertest.DeploymentStatus(u.GetName(), u.GetGeneration(), state), true); err != nil {
			return err
		}
		p.written[key] = want
	}
	return nil
}

func (p *controllers) get(ctx context.Context, gvr schema.GroupVersionResource, ns, name string) (*unstructured.Unstructured, error) {
	u, err := p.d.Resource(gvr).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return u, err
}

func (p *controllers) create(ctx context.Context, gvr schema.GroupVersionResource, obj map[string]any) error {
	u := &unstructured.Unstructured{Object: obj}
	_, err := p.d.Resource(gvr).Namespace(u.GetNamespace()).Create(ctx, u, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

func (p *controllers) pass(ctx context.Context) error {
	d := p.d
	// OLM: catalogs connect.
	cats, err := d.Resource(clustertest.CatalogSources).Namespace("openshift-marketplace").List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, c := range cats.Items {
		if s, _, _ := unstructured.NestedString(c.Object, "status", "connectionState", "lastObservedState"); s != "READY" {
			if err := clustertest.SetStatus(d, clustertest.CatalogSources, c.GetNamespace(), c.GetName(), map[string]any{
				"connectionState": map[string]any{"lastObservedState": "READY", "address": "cs.openshift-marketplace.svc:50051"}}, true); err != nil {
				return err
			}
		}
	}
	// OLM: the subscription resolves to an InstallPlan that waits for approval.
	sub, err := p.get(ctx, clustertest.Subscriptions, handoff.OperatorNamespace, handoff.OperatorPackage)
	if err != nil || sub == nil {
		return err
	}
	if ref, _, _ := unstructured.NestedString(sub.Object, "status", "installPlanRef", "name"); ref == "" {
		approval, _, _ := unstructured.NestedString(sub.Object, "spec", "installPlanApproval")
		if err := p.create(ctx, clustertest.InstallPlans, map[string]any{
			"apiVersion": "operators.coreos.com/v1alpha1", "kind": "InstallPlan",
			"metadata": map[string]any{"name": stagePlan, "namespace": handoff.OperatorNamespace},
			"spec":     map[string]any{"approval": approval, "approved": approval == "Automatic", "clusterServiceVersionNames": []any{stageCSV}},
		}); err != nil {
			return err
		}
		return clustertest.SetStatus(d, clustertest.Subscriptions, handoff.OperatorNamespace, handoff.OperatorPackage, map[string]any{
			"currentCSV": stageCSV, "state": "UpgradePending", "lastUpdated": "2026-01-01T00:00:00Z",
			"installPlanRef": map[string]any{"name": stagePlan, "namespace": handoff.OperatorNamespace, "kind": "InstallPlan", "apiVersion": "operators.coreos.com/v1alpha1"},
		}, true)
	}
	// OLM: an approved plan installs the CSV.
	plan, err := p.get(ctx, clustertest.InstallPlans, handoff.OperatorNamespace, stagePlan)
	if err != nil || plan == nil {
		return err
	}
	if ok, _, _ := unstructured.NestedBool(plan.Object, "spec", "approved"); !ok {
		return nil
	}
	csv, err := p.get(ctx, clustertest.ClusterServiceVersions, handoff.OperatorNamespace, stageCSV)
	if err != nil {
		return err
	}
	if csv == nil {
		if err := p.create(ctx, clustertest.ClusterServiceVersions, map[string]any{
			"apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion",
			"metadata": map[string]any{"name": stageCSV, "namespace": handoff.OperatorNamespace},
			"spec": map[string]any{"displayName": "Red Hat OpenShift GitOps",
				"install": map[string]any{"strategy": "deployment"}},
		}); err != nil {
			return err
		}
		return clustertest.SetStatus(d, clustertest.ClusterServiceVersions, handoff.OperatorNamespace, stageCSV, map[string]any{
			"phase": "Succeeded", "reason": "InstallSucceeded", "message": "install strategy completed with no errors"}, true)
	}
	// The GitOps operator: the default instance.
	dep, err := p.get(ctx, clustertest.Deployments, handoff.ArgoNamespace, handoff.ServerDeployment)
	if err != nil {
		return err
	}
	if dep == nil {
		if err := p.create(ctx, clustertest.Namespaces, map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": handoff.ArgoNamespace}}); err != nil {
			return err
		}
		if p.argo, err = argocdtest.Start(ctx, d, argocdtest.Options{Dir: p.dir, Kubeconfig: p.kubeconfig, Namespace: handoff.ArgoNamespace}); err != nil {
			return err
		}
		labels := map[string]any{"app.kubernetes.io/name": handoff.ServerDeployment}
		if err := p.create(ctx, clustertest.Deployments, map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": handoff.ServerDeployment, "namespace": handoff.ArgoNamespace},
			"spec": map[string]any{"replicas": int64(1), "selector": map[string]any{"matchLabels": labels},
				"template": map[string]any{"metadata": map[string]any{"labels": labels},
					"spec": map[string]any{"containers": []any{map[string]any{"name": "argocd-server", "image": "registry.site.example:8443/gitops/argocd:v1.16"}}}}},
		}); err != nil {
			return err
		}
		if err := clustertest.SetStatus(d, clustertest.Deployments, handoff.ArgoNamespace, handoff.ServerDeployment, map[string]any{
			"observedGeneration": int64(1), "replicas": int64(1), "readyReplicas": int64(1), "availableReplicas": int64(1), "updatedReplicas": int64(1),
			"conditions": []any{map[string]any{"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable", "message": "Deployment has minimum availability."}},
		}, true); err != nil {
			return err
		}
		return p.create(ctx, clustertest.Routes, map[string]any{
			"apiVersion": "route.openshift.io/v1", "kind": "Route",
			"metadata": map[string]any{"name": handoff.ServerRoute, "namespace": handoff.ArgoNamespace},
			"spec":     map[string]any{"host": argoHost, "to": map[string]any{"kind": "Service", "name": handoff.ServerDeployment}},
		})
	}
	return p.deployments(ctx)
}
