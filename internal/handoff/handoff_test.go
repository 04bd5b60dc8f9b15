package handoff_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/bootstrap-dev/bootstrap/internal/cluster"
	"github.com/bootstrap-dev/bootstrap/internal/cluster/clustertest"
	"github.com/bootstrap-dev/bootstrap/internal/gitrepo/gitrepotest"
	"github.com/bootstrap-dev/bootstrap/internal/handoff"
	"github.com/bootstrap-dev/bootstrap/internal/handoff/argocdtest"
)

var server clustertest.Server

func TestMain(m *testing.M) {
	code := m.Run()
	server.Stop()
	os.Exit(code)
}

const csvName = "openshift-gitops-operator.v1.16.2"

// playOLM acts as OLM and the GitOps operator until stop is called: it resolves the Subscription
// to an unapproved InstallPlan, installs the CSV once the plan is approved, and brings up the
// default Argo CD instance: Argo CD's own controllers (argocdtest), then the server Deployment
// marked available and its Route. Argo CD's verdicts on Applications are its own.
func playOLM(t *testing.T, d dynamic.Interface, kubeconfig string, errs chan<- error, failed context.CancelFunc) (stop func(), instance func() *argocdtest.Instance) {
	ctx, cancel := context.WithCancel(context.Background())
	dir := t.TempDir()
	var argo *argocdtest.Instance
	var mu sync.Mutex
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		step := 0
		for ctx.Err() == nil && step < 3 {
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
				var a *argocdtest.Instance
				a, err = argocdtest.Start(ctx, d, argocdtest.Options{Dir: dir, Kubeconfig: kubeconfig, Namespace: handoff.ArgoNamespace,
					RestartBackoff: 500 * time.Millisecond})
				mu.Lock()
				argo = a
				mu.Unlock()
				if err == nil {
					err = argoInstance(ctx, d)
				}
			}
			if err != nil {
				errs <- err
				failed()
				return
			}
			step++
		}
	}()
	return func() {
			cancel()
			wg.Wait()
			if err := argo.Stop(); err != nil {
				t.Errorf("stop argo cd: %v", err)
			}
		}, func() *argocdtest.Instance {
			mu.Lock()
			defer mu.Unlock()
			return argo
		}
}

// argoInstance is the server Deployment (available) and Route the operator creates for the
// default instance. No argocd-server runs: the handoff judges the instance by this Deployment
// when the cluster does not serve the operator's ArgoCD kind, as the testbin does not.
func argoInstance(ctx context.Context, d dynamic.Interface) error {
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

// The repository's fault paths: one that does not render (kustomize names a missing file), and
// one whose child Application deploys a Deployment that the test, as the deployment controller,
// reports past its progress deadline.
var faultFiles = map[string]string{
	"faults/unrenderable/kustomization.yaml": "resources:\n- namespace.yaml\n- quota-missing.yaml\n",
	"faults/unrenderable/namespace.yaml":     "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: faults-unrenderable\n",
	"faults/storage/deployment.yaml":         clustertest.DeploymentYAML("lvms-operator", "openshift-storage"),
	"faults/storage/namespace.yaml":          "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: openshift-storage\n",
}

// childApp is an Application the degraded fault's root deploys: Argo CD syncs it from path.
func childApp(repoURL, name, path string) string {
	return fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: %s
  namespace: %s
spec:
  project: default
  source: {repoURL: %q, targetRevision: main, path: %s}
  destination: {server: "https://kubernetes.default.svc"}
  syncPolicy:
    automated: {prune: true, selfHeal: true}
`, name, handoff.ArgoNamespace, repoURL, path)
}

// The handoff against Argo CD's own controllers: they sync the repository's path, and the handoff
// ends on their verdict (Synced and Healthy at main's commit, the namespace applied with Argo CD's
// tracking label and annotation); then the faults, each named with Argo CD's own message.
func TestHandoff(t *testing.T) {
	if m := argocdtest.Missing(); m != "" {
		t.Fatal(m)
	}
	cfg := server.Config(t)
	d := clustertest.Dynamic(t, cfg)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, server.Kubeconfig(t), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := cluster.New(cfg, cluster.WithPollInterval(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	git := gitrepotest.Start(t)
	files := map[string]string{"faults/degraded/storage.yaml": childApp(git.URL, "storage", "faults/storage")}
	for k, v := range faultFiles {
		files[k] = v
	}
	head := git.Commit(t, "refs/heads/main", files)
	clustertest.Create(t, d, clustertest.Namespaces, map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "openshift-marketplace"}})
	opts := handoff.Options{
		Channel: "gitops-1.16", Approval: "Manual", Source: "cs-redhat-operators",
		Repo: handoff.Repo{URL: git.URL, Revision: "main", Path: "clusters/lab",
			Username: git.Username, Password: git.Password, CA: git.CA},
		Timeout: 5 * time.Minute, Patience: 20 * time.Second,
	}
	errs := make(chan error, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop, argo := playOLM(t, d, kubeconfig, errs, cancel)
	t.Cleanup(stop)
	var lines []string
	var mu sync.Mutex
	res, err := handoff.Run(ctx, c, opts, func(s string) { mu.Lock(); lines = append(lines, s); mu.Unlock() })
	select {
	case e := <-errs:
		t.Fatalf("OLM player: %v", e)
	default:
	}
	if err != nil {
		t.Fatalf("handoff: %v\n%s", err, strings.Join(lines, "\n"))
	}
	if res.CSV != csvName || res.ApprovedInstallPlan != "install-abcde" || res.Sync != "Synced" || res.Health != "Healthy" || res.Revision != head {
		t.Fatalf("result: %+v; want Synced and Healthy at %s", res, head)
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
	if strings.Contains(string(js), git.Password) || strings.Contains(strings.Join(lines, "\n"), git.Password) {
		t.Fatal("the Git password leaked into the result or progress")
	}
	// Argo CD applied the path: the namespace carries its tracking annotation and label.
	ns, err := d.Resource(clustertest.Namespaces).Get(context.Background(), "lab-apps", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("Argo CD did not create the path's namespace: %v", err)
	}
	// The tracking id is <app>:<group>/<kind>:<namespace>/<name>; Argo CD puts the destination
	// namespace there for a cluster-scoped object.
	if id := ns.GetAnnotations()["argocd.argoproj.io/tracking-id"]; !strings.HasPrefix(id, "root:/Namespace:") || !strings.HasSuffix(id, "/lab-apps") || ns.GetLabels()["app.kubernetes.io/instance"] != "root" {
		t.Fatalf("namespace lab-apps: labels %v annotations %v; want Argo CD's tracking of Application root", ns.GetLabels(), ns.GetAnnotations())
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

	// A controller that dies (a crash, the out-of-memory killer) comes back as its pod would, and
	// Argo CD's verdict after the restart is its own again: the handoff ends Synced and Healthy.
	t.Run("a killed controller is restarted", func(t *testing.T) {
		a := argo()
		const ctrl = "argocd-application-controller"
		if n := a.Started(ctrl); n != 1 {
			t.Fatalf("%s started %d times before the kill", ctrl, n)
		}
		if err := a.Kill(ctrl); err != nil {
			t.Fatal(err)
		}
		if !pollFor(30*time.Second, func() bool { return len(a.Restarts()) > 0 }) {
			t.Fatal("no restart noted within 30 s of the kill")
		}
		note := a.Restarts()[0]
		if !strings.Contains(note, ctrl+" exited (signal: killed); restart 1 in 500ms") {
			t.Fatalf("restart note %q", note)
		}
		log, _ := os.ReadFile(a.Logs(ctrl))
		if !strings.Contains(string(log), "argocdtest: "+note) {
			t.Fatalf("the restart is not in the controller's log:\n%s", log)
		}
		if !pollFor(time.Minute, func() bool { return a.Started(ctrl) == 2 }) {
			t.Fatalf("%s started %d times a minute after the kill, want 2", ctrl, a.Started(ctrl))
		}
		// The restarted controller answers a refresh of the root with a new reconciledAt (whole
		// seconds: one from a second that began after the restart).
		since := time.Now().Truncate(time.Second).Add(time.Second)
		time.Sleep(time.Until(since))
		if _, err := d.Resource(clustertest.Applications).Namespace(handoff.ArgoNamespace).Patch(context.Background(), "root", types.MergePatchType,
			[]byte(`{"metadata":{"annotations":{"argocd.argoproj.io/refresh":"normal"}}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		var at string
		if !pollFor(2*time.Minute, func() bool {
			u, err := d.Resource(clustertest.Applications).Namespace(handoff.ArgoNamespace).Get(context.Background(), "root", metav1.GetOptions{})
			if err != nil {
				return false
			}
			at, _, _ = unstructured.NestedString(u.Object, "status", "reconciledAt")
			r, err := time.Parse(time.RFC3339, at)
			return err == nil && !r.Before(since)
		}) {
			log, _ := os.ReadFile(a.Logs(ctrl))
			t.Fatalf("root last reconciled at %s, not since the restart (%s); the controller's log ends:\n%s", at, since.UTC().Format(time.RFC3339), tailLines(string(log), 30))
		}
		// ...and its verdict ends the handoff.
		res, err := handoff.Run(context.Background(), c, opts, nil)
		if err != nil {
			t.Fatalf("handoff after the restart: %v", err)
		}
		if res.Sync != "Synced" || res.Health != "Healthy" || res.Revision != head {
			t.Fatalf("after the restart: %+v", res)
		}
		if n := len(a.Restarts()); n != 1 {
			t.Fatalf("%d restarts, want 1: %q", n, a.Restarts())
		}
	})

	// A push after the handoff: run again with the commit the jump host now finds, and the
	// handoff ends only when Argo CD reports the root synced at it (Argo CD itself would look at
	// the repository again only after its reconciliation period, minutes later), with the new
	// commit's object applied by Argo CD.
	t.Run("a push since: done only at the new commit", func(t *testing.T) {
		next := git.Commit(t, "refs/heads/main", map[string]string{
			"clusters/lab/kustomization.yaml": "resources:\n- namespace.yaml\n- configmap.yaml\n",
			"clusters/lab/configmap.yaml":     "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: pushed\n  namespace: lab-apps\ndata:\n  at: second-commit\n",
		})
		o := opts
		o.Commit = next
		var lines []string
		res, err := handoff.Run(context.Background(), c, o, func(s string) { mu.Lock(); lines = append(lines, s); mu.Unlock() })
		if err != nil {
			t.Fatalf("handoff after a push: %v", err)
		}
		if res.Revision != next {
			t.Fatalf("handoff done at %s; the repository's main is %s", res.Revision, next)
		}
		cm, err := d.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace("lab-apps").Get(context.Background(), "pushed", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("the new commit's ConfigMap: %v", err)
		}
		if id := cm.GetAnnotations()["argocd.argoproj.io/tracking-id"]; !strings.HasPrefix(id, "root:") {
			t.Fatalf("ConfigMap lab-apps/pushed not applied by Argo CD: annotations %v", cm.GetAnnotations())
		}
		t.Logf("after the push:\n%s", strings.Join(lines, "\n"))
	})

	// A fault's root Application is removed afterwards, so the next fault's wait for every
	// Application does not find it.
	fault := func(t *testing.T, name, path string, o handoff.Options) error {
		t.Helper()
		o.RootApp.Name, o.Repo.Path, o.Timeout, o.Patience = name, path, 3*time.Minute, 10*time.Second
		t.Cleanup(func() {
			for _, a := range []string{name, "storage"} {
				_ = d.Resource(clustertest.Applications).Namespace(handoff.ArgoNamespace).Delete(context.Background(), a, metav1.DeleteOptions{})
			}
		})
		_, err := handoff.Run(context.Background(), c, o, nil)
		return err
	}

	t.Run("a path that does not render", func(t *testing.T) {
		err := fault(t, "unrenderable", "faults/unrenderable", opts)
		var fe *cluster.FailedError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), "ComparisonError") || !strings.Contains(err.Error(), "quota-missing.yaml") {
			t.Fatalf("want a FailedError with Argo CD's ComparisonError naming quota-missing.yaml, got %v", err)
		}
	})

	t.Run("a degraded child", func(t *testing.T) {
		done := make(chan struct{})
		defer close(done)
		go playDeploymentController(d, "openshift-storage", "lvms-operator", done)
		err := fault(t, "degraded", "faults/degraded", opts)
		var fe *cluster.FailedError
		want := `Application storage: Degraded: Deployment openshift-storage/lvms-operator: Deployment "lvms-operator" exceeded its progress deadline`
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), want) {
			t.Fatalf("want a FailedError with %q, got %v", want, err)
		}
	})

	t.Run("a wrong credential", func(t *testing.T) {
		// The same repository by another name (the certificate is for localhost too): nothing
		// Argo CD cached for the first URL answers for it. It runs last: the repository Secret
		// is the handoff's one Secret, now for this URL.
		o := opts
		o.Repo.URL, o.Repo.Password = strings.Replace(git.URL, "127.0.0.1", "localhost", 1), "not-the-password"
		err := fault(t, "wrong-credential", "clusters/lab", o)
		var fe *cluster.FailedError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), "ComparisonError") || !strings.Contains(err.Error(), "authentication required") {
			t.Fatalf("want a FailedError with Argo CD's ComparisonError saying authentication required, got %v", err)
		}
		if strings.Contains(err.Error(), "not-the-password") {
			t.Fatal("the password leaked into the error")
		}
	})
}

// playDeploymentController plays kube-controller-manager's deployment controller for one
// Deployment that cannot roll out: once Argo CD created it, its status says the progress deadline
// passed. It stops when done is closed.
func playDeploymentController(d dynamic.Interface, ns, name string, done <-chan struct{}) {
	for {
		select {
		case <-done:
			return
		case <-time.After(200 * time.Millisecond):
		}
		u, err := d.Resource(clustertest.Deployments).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			continue
		}
		if og, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration"); og == u.GetGeneration() {
			continue
		}
		_ = clustertest.SetStatus(d, clustertest.Deployments, ns, name, clustertest.DeploymentStatus(name, u.GetGeneration(), "deadline"), true)
	}
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

// pollFor reports whether cond held within d, checking every 100 ms.
func pollFor(d time.Duration, cond func() bool) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

func tailLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
