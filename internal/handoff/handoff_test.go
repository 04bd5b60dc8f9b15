package handoff_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/bootstrap-dev/bootstrap/internal/cluster"
	"github.com/bootstrap-dev/bootstrap/internal/cluster/clustertest"
	"github.com/bootstrap-dev/bootstrap/internal/handoff"
)

var server clustertest.Server

func TestMain(m *testing.M) {
	code := m.Run()
	server.Stop()
	os.Exit(code)
}

const csvName = "openshift-gitops-operator.v1.16.2"

// playOLMAndArgo acts as OLM, the GitOps operator and Argo CD until stop is called: it resolves the
// Subscription to an unapproved InstallPlan, installs the CSV once the plan is approved, brings up
// the Argo CD server, and reports the root application with the given status once it exists.
func playOLMAndArgo(d dynamic.Interface, rootStatus map[string]any, errs chan<- error) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		step := 0
		for ctx.Err() == nil && step < 4 {
			time.Sleep(100 * time.Millisecond)
			var err error
			switch step {
			case 0: // OLM resolves the subscription
				if _, err = d.Resource(clustertest.Subscriptions).Namespace(handoff.OperatorNamespace).Get(ctx, handoff.OperatorPackage, metav1.GetOptions{}); err != nil {
					continue
				}
				_, err = d.Resource(clustertest.InstallPlans).Namespace(handoff.OperatorNamespace).Create(ctx, &unstructured.Unstructured{Object: map[string]any{
					"apiVersion": "operators.coreos.com/v1alpha1", "kind": "InstallPlan",
					"metadata": map[string]any{"name": "install-abcde", "namespace": handoff.OperatorNamespace},
					"spec":     map[string]any{"approval": "Manual", "approved": false, "clusterServiceVersionNames": []any{csvName}},
				}}, metav1.CreateOptions{})
				if err == nil {
					err = clustertest.SetStatus(d, clustertest.Subscriptions, handoff.OperatorNamespace, handoff.OperatorPackage, map[string]any{
						"currentCSV": csvName, "state": "UpgradePending", "lastUpdated": "2026-01-01T00:00:00Z",
						"installPlanRef": map[string]any{"name": "install-abcde", "namespace": handoff.OperatorNamespace, "kind": "InstallPlan", "apiVersion": "operators.coreos.com/v1alpha1"},
					}, true)
				}
			case 1: // OLM installs once approved
				ip, gerr := d.Resource(clustertest.InstallPlans).Namespace(handoff.OperatorNamespace).Get(ctx, "install-abcde", metav1.GetOptions{})
				if gerr != nil {
					err = gerr
					break
				}
				if ok, _, _ := unstructured.NestedBool(ip.Object, "spec", "approved"); !ok {
					continue
				}
				_, err = d.Resource(clustertest.ClusterServiceVersions).Namespace(handoff.OperatorNamespace).Create(ctx, &unstructured.Unstructured{Object: map[string]any{
					"apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion",
					"metadata": map[string]any{"name": csvName, "namespace": handoff.OperatorNamespace},
					"spec": map[string]any{"displayName": "Red Hat OpenShift GitOps",
						"install": map[string]any{"strategy": "deployment"}},
				}}, metav1.CreateOptions{})
				if err == nil {
					err = clustertest.SetStatus(d, clustertest.ClusterServiceVersions, handoff.OperatorNamespace, csvName, map[string]any{"phase": "Succeeded", "reason": "InstallSucceeded", "message": "install strategy completed with no errors"}, true)
				}
			case 2: // the operator brings up the default Argo CD instance
				err = argoInstance(ctx, d)
			case 3: // Argo CD syncs the root application
				if _, err = d.Resource(clustertest.Applications).Namespace(handoff.ArgoNamespace).Get(ctx, "root", metav1.GetOptions{}); err != nil {
					continue
				}
				err = clustertest.SetStatus(d, clustertest.Applications, handoff.ArgoNamespace, "root", rootStatus, false)
			}
			if err != nil {
				errs <- err
				return
			}
			step++
		}
	}()
	return func() { cancel(); wg.Wait() }
}

func argoInstance(ctx context.Context, d dynamic.Interface) error {
	if _, err := d.Resource(clustertest.Namespaces).Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": handoff.ArgoNamespace}}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	labels := map[string]any{"app.kubernetes.io/name": handoff.ServerDeployment}
	if _, err := d.Resource(clustertest.Deployments).Namespace(handoff.ArgoNamespace).Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": handoff.ServerDeployment, "namespace": handoff.ArgoNamespace},
		"spec": map[string]any{"replicas": int64(1), "selector": map[string]any{"matchLabels": labels},
			"template": map[string]any{"metadata": map[string]any{"labels": labels},
				"spec": map[string]any{"containers": []any{map[string]any{"name": "argocd-server", "image": "registry.site.example:8443/gitops/argocd:v1.16"}}}}},
	}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	if err := clustertest.SetStatus(d, clustertest.Deployments, handoff.ArgoNamespace, handoff.ServerDeployment, map[string]any{
		"observedGeneration": int64(1), "replicas": int64(1), "readyReplicas": int64(1), "availableReplicas": int64(1), "updatedReplicas": int64(1),
		"conditions": []any{map[string]any{"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable", "message": "Deployment has minimum availability."}},
	}, true); err != nil {
		return err
	}
	_, err := d.Resource(clustertest.Routes).Namespace(handoff.ArgoNamespace).Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "route.openshift.io/v1", "kind": "Route",
		"metadata": map[string]any{"name": handoff.ServerRoute, "namespace": handoff.ArgoNamespace},
		"spec": map[string]any{"host": "openshift-gitops-server-openshift-gitops.apps.lab.example.com",
			"to": map[string]any{"kind": "Service", "name": handoff.ServerDeployment}},
	}}, metav1.CreateOptions{})
	return err
}

func appStatus(sync, health string, resources ...any) map[string]any {
	return map[string]any{
		"sync":      map[string]any{"status": sync, "revision": "0123456789abcdef0123456789abcdef01234567"},
		"health":    map[string]any{"status": health},
		"resources": resources,
	}
}

func TestHandoff(t *testing.T) {
	cfg := server.Config(t)
	d := clustertest.Dynamic(t, cfg)
	c, err := cluster.New(cfg, cluster.WithPollInterval(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	clustertest.Create(t, d, clustertest.Namespaces, map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "openshift-marketplace"}})
	opts := handoff.Options{
		Channel: "gitops-1.16", Approval: "Manual", Source: "cs-redhat-operators",
		Repo: handoff.Repo{URL: "https://git.site.example:3000/platform/cluster-config.git", Revision: "main", Path: "clusters/lab",
			Username: "bootstrap", Password: "s3cret-token-value", CA: []byte(strings.Repeat("x", 10))},
		Timeout: 20 * time.Second,
	}
	errs := make(chan error, 1)
	stop := playOLMAndArgo(d, appStatus("Synced", "Healthy"), errs)
	var lines []string
	var mu sync.Mutex
	res, err := handoff.Run(context.Background(), c, opts, func(s string) { mu.Lock(); lines = append(lines, s); mu.Unlock() })
	stop()
	select {
	case e := <-errs:
		t.Fatalf("controller player: %v", e)
	default:
	}
	if err != nil {
		t.Fatalf("handoff: %v\n%s", err, strings.Join(lines, "\n"))
	}
	if res.CSV != csvName || res.ApprovedInstallPlan != "install-abcde" || res.Sync != "Synced" || res.Health != "Healthy" {
		t.Fatalf("result: %+v", res)
	}
	if res.URL != "https://openshift-gitops-server-openshift-gitops.apps.lab.example.com" {
		t.Fatalf("url: %q", res.URL)
	}
	// The testbin has no ArgoCD CRD (no served module carries it): the server Deployment decides,
	// and the handoff says so.
	if res.Instance != "Deployment openshift-gitops/openshift-gitops-server" || !strings.Contains(strings.Join(lines, "\n"), "does not serve argoproj.io/v1beta1 ArgoCD") {
		t.Fatalf("instance judged by %q; progress:\n%s", res.Instance, strings.Join(lines, "\n"))
	}
	js, _ := json.Marshal(res)
	if strings.Contains(string(js), "s3cret") || strings.Contains(strings.Join(lines, "\n"), "s3cret") {
		t.Fatal("the Git password leaked into the result or progress")
	}
	sec, err := d.Resource(clustertest.Secrets).Namespace(handoff.ArgoNamespace).Get(context.Background(), handoff.RepoSecretName, metav1.GetOptions{})
	if err != nil || sec.GetLabels()["argocd.argoproj.io/secret-type"] != "repository" {
		t.Fatalf("repository secret: %v %v", sec, err)
	}
	sub, _ := d.Resource(clustertest.Subscriptions).Namespace(handoff.OperatorNamespace).Get(context.Background(), handoff.OperatorPackage, metav1.GetOptions{})
	if ch, _, _ := unstructured.NestedString(sub.Object, "spec", "channel"); ch != "gitops-1.16" {
		t.Fatalf("subscription channel %q", ch)
	}

	t.Run("second run changes nothing", func(t *testing.T) {
		res, err := handoff.Run(context.Background(), c, opts, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Changed != 0 || res.ApprovedInstallPlan != "" {
			t.Fatalf("second run: %+v", res)
		}
		if err := handoff.Verify(context.Background(), c, "root"); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("degraded child is named", func(t *testing.T) {
		clustertest.MustSetStatus(t, d, clustertest.Applications, handoff.ArgoNamespace, "root", appStatus("Synced", "Degraded",
			map[string]any{"kind": "Application", "group": "argoproj.io", "name": "storage", "namespace": handoff.ArgoNamespace, "health": map[string]any{"status": "Degraded"}}), false)
		clustertest.Create(t, d, clustertest.Applications, map[string]any{"apiVersion": handoff.ArgoV1a1, "kind": "Application",
			"metadata": map[string]any{"name": "storage", "namespace": handoff.ArgoNamespace},
			"spec": map[string]any{"project": "default", "destination": map[string]any{"server": "https://kubernetes.default.svc"},
				"source": map[string]any{"repoURL": opts.Repo.URL, "path": "storage"}}})
		clustertest.MustSetStatus(t, d, clustertest.Applications, handoff.ArgoNamespace, "storage", appStatus("Synced", "Degraded",
			map[string]any{"kind": "Deployment", "group": "apps", "name": "lvms-operator", "namespace": "openshift-storage",
				"health": map[string]any{"status": "Degraded", "message": "Deployment \"lvms-operator\" exceeded its progress deadline"}}), false)
		err := handoff.Verify(context.Background(), c, "root")
		if err == nil {
			t.Fatal("Verify passed a degraded root")
		}
		_, err = handoff.WaitApplication(context.Background(), c, "root", 5*time.Second, nil)
		var fe *cluster.FailedError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), "Application storage: Deployment openshift-storage/lvms-operator: Deployment \"lvms-operator\" exceeded its progress deadline") {
			t.Fatalf("want FailedError naming the degraded child, got %v", err)
		}
	})

	t.Run("timeout says what was last seen", func(t *testing.T) {
		clustertest.MustSetStatus(t, d, clustertest.Applications, handoff.ArgoNamespace, "root", appStatus("OutOfSync", "Progressing"), false)
		_, err := handoff.WaitApplication(context.Background(), c, "root", 700*time.Millisecond, nil)
		var te *cluster.TimeoutError
		if !errors.As(err, &te) || te.Last != "sync OutOfSync, health Progressing" {
			t.Fatalf("want TimeoutError, got %v", err)
		}
	})

	t.Run("failed CSV stops the handoff", func(t *testing.T) {
		clustertest.MustSetStatus(t, d, clustertest.ClusterServiceVersions, handoff.OperatorNamespace, csvName, map[string]any{
			"phase": "Failed", "reason": "InstallCheckFailed", "message": "install timeout"}, true)
		_, err := handoff.Run(context.Background(), c, opts, nil)
		var fe *cluster.FailedError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), "Failed (InstallCheckFailed): install timeout") {
			t.Fatalf("want FailedError from the CSV, got %v", err)
		}
	})
}

func TestBadRepoStopsBeforeAnyChange(t *testing.T) {
	for _, tc := range []struct {
		repo handoff.Repo
		want string
	}{
		{handoff.Repo{URL: "ftp://git.site.example/y"}, `scheme "ftp"`},
		{handoff.Repo{URL: "git@git.site.example:platform/config.git"}, "sshKeyFile"},
		{handoff.Repo{URL: "ssh://git@git.site.example/platform/config.git", SSHPrivateKey: []byte("k")}, "knownHostsFile"},
		{handoff.Repo{URL: "not a url"}, "is not an https"},
		{handoff.Repo{}, "repoURL is empty"},
	} {
		// A nil client: any attempt to change the cluster would panic.
		_, err := handoff.Run(context.Background(), nil, handoff.Options{Source: "cs", Repo: tc.repo}, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want an error containing %q", tc.repo.URL, err, tc.want)
		}
	}
}
