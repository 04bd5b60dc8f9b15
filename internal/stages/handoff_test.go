package stages

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/bootstrap-dev/bootstrap/internal/cluster"
	"github.com/bootstrap-dev/bootstrap/internal/cluster/clustertest"
	"github.com/bootstrap-dev/bootstrap/internal/gitrepo"
	"github.com/bootstrap-dev/bootstrap/internal/gitrepo/gitrepotest"
	"github.com/bootstrap-dev/bootstrap/internal/handoff"
	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

var (
	gvrCatalog = clustertest.GVR("operators.coreos.com", "v1alpha1", "catalogsources")
	gvrSub     = clustertest.GVR("operators.coreos.com", "v1alpha1", "subscriptions")
	gvrPlan    = clustertest.GVR("operators.coreos.com", "v1alpha1", "installplans")
	gvrCSV     = clustertest.GVR("operators.coreos.com", "v1alpha1", "clusterserviceversions")
	gvrApp     = clustertest.GVR("argoproj.io", "v1alpha1", "applications")
	gvrDeploy  = clustertest.GVR("apps", "v1", "deployments")
	gvrRoute   = clustertest.GVR("route.openshift.io", "v1", "routes")
	gvrNS      = clustertest.GVR("", "v1", "namespaces")
)

const (
	stageCSV  = "openshift-gitops-operator.v1.16.2"
	stagePlan = "install-stage1"
	argoHost  = "openshift-gitops-server-openshift-gitops.apps.lab.example.com"
)

// controllers plays OLM, the GitOps operator and Argo CD against the real API server, one
// reconcile pass every 100 ms until stopped: CatalogSources READY; the Subscription resolved to a
// Manual InstallPlan; the CSV installed (Succeeded) once the plan is approved; the Argo CD server
// Deployment Available with its Route; the root Application Synced and Healthy at the commit.
type controllers struct {
	d      dynamic.Interface
	commit string
	stop   context.CancelFunc
	done   chan error
}

func startControllers(d dynamic.Interface, commit string) *controllers {
	ctx, cancel := context.WithCancel(context.Background())
	p := &controllers{d: d, commit: commit, stop: cancel, done: make(chan error, 1)}
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

// Stop stops the controllers and fails the test when one of them failed.
func (p *controllers) Stop(t *testing.T) {
	t.Helper()
	p.stop()
	if err := <-p.done; err != nil {
		t.Fatalf("controller player: %v", err)
	}
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
	cats, err := d.Resource(gvrCatalog).Namespace("openshift-marketplace").List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, c := range cats.Items {
		if s, _, _ := unstructured.NestedString(c.Object, "status", "connectionState", "lastObservedState"); s != "READY" {
			if err := clustertest.SetStatus(d, gvrCatalog, c.GetNamespace(), c.GetName(), map[string]any{
				"connectionState": map[string]any{"lastObservedState": "READY", "address": "cs.openshift-marketplace.svc:50051"}}, true); err != nil {
				return err
			}
		}
	}
	// OLM: the subscription resolves to an InstallPlan that waits for approval.
	sub, err := p.get(ctx, gvrSub, handoff.OperatorNamespace, handoff.OperatorPackage)
	if err != nil || sub == nil {
		return err
	}
	if ref, _, _ := unstructured.NestedString(sub.Object, "status", "installPlanRef", "name"); ref == "" {
		approval, _, _ := unstructured.NestedString(sub.Object, "spec", "installPlanApproval")
		if err := p.create(ctx, gvrPlan, map[string]any{
			"apiVersion": "operators.coreos.com/v1alpha1", "kind": "InstallPlan",
			"metadata": map[string]any{"name": stagePlan, "namespace": handoff.OperatorNamespace},
			"spec":     map[string]any{"approval": approval, "approved": approval == "Automatic", "clusterServiceVersionNames": []any{stageCSV}},
		}); err != nil {
			return err
		}
		return clustertest.SetStatus(d, gvrSub, handoff.OperatorNamespace, handoff.OperatorPackage, map[string]any{
			"currentCSV": stageCSV, "state": "UpgradePending", "lastUpdated": "2026-01-01T00:00:00Z",
			"installPlanRef": map[string]any{"name": stagePlan, "namespace": handoff.OperatorNamespace, "kind": "InstallPlan", "apiVersion": "operators.coreos.com/v1alpha1"},
		}, true)
	}
	// OLM: an approved plan installs the CSV.
	plan, err := p.get(ctx, gvrPlan, handoff.OperatorNamespace, stagePlan)
	if err != nil || plan == nil {
		return err
	}
	if ok, _, _ := unstructured.NestedBool(plan.Object, "spec", "approved"); !ok {
		return nil
	}
	csv, err := p.get(ctx, gvrCSV, handoff.OperatorNamespace, stageCSV)
	if err != nil {
		return err
	}
	if csv == nil {
		if err := p.create(ctx, gvrCSV, map[string]any{
			"apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion",
			"metadata": map[string]any{"name": stageCSV, "namespace": handoff.OperatorNamespace},
			"spec": map[string]any{"displayName": "Red Hat OpenShift GitOps",
				"install": map[string]any{"strategy": "deployment"}},
		}); err != nil {
			return err
		}
		return clustertest.SetStatus(d, gvrCSV, handoff.OperatorNamespace, stageCSV, map[string]any{
			"phase": "Succeeded", "reason": "InstallSucceeded", "message": "install strategy completed with no errors"}, true)
	}
	// The GitOps operator: the default instance.
	dep, err := p.get(ctx, gvrDeploy, handoff.ArgoNamespace, handoff.ServerDeployment)
	if err != nil {
		return err
	}
	if dep == nil {
		if err := p.create(ctx, gvrNS, map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": handoff.ArgoNamespace}}); err != nil {
			return err
		}
		labels := map[string]any{"app.kubernetes.io/name": handoff.ServerDeployment}
		if err := p.create(ctx, gvrDeploy, map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": handoff.ServerDeployment, "namespace": handoff.ArgoNamespace},
			"spec": map[string]any{"replicas": int64(1), "selector": map[string]any{"matchLabels": labels},
				"template": map[string]any{"metadata": map[string]any{"labels": labels},
					"spec": map[string]any{"containers": []any{map[string]any{"name": "argocd-server", "image": "registry.site.example:8443/gitops/argocd:v1.16"}}}}},
		}); err != nil {
			return err
		}
		if err := clustertest.SetStatus(d, gvrDeploy, handoff.ArgoNamespace, handoff.ServerDeployment, map[string]any{
			"observedGeneration": int64(1), "replicas": int64(1), "readyReplicas": int64(1), "availableReplicas": int64(1), "updatedReplicas": int64(1),
			"conditions": []any{map[string]any{"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable", "message": "Deployment has minimum availability."}},
		}, true); err != nil {
			return err
		}
		return p.create(ctx, gvrRoute, map[string]any{
			"apiVersion": "route.openshift.io/v1", "kind": "Route",
			"metadata": map[string]any{"name": handoff.ServerRoute, "namespace": handoff.ArgoNamespace},
			"spec":     map[string]any{"host": argoHost, "to": map[string]any{"kind": "Service", "name": handoff.ServerDeployment}},
		})
	}
	// Argo CD: the root application syncs.
	root, err := p.get(ctx, gvrApp, handoff.ArgoNamespace, "root")
	if err != nil || root == nil {
		return err
	}
	if h, _, _ := unstructured.NestedString(root.Object, "status", "health", "status"); h == "" {
		return clustertest.SetStatus(d, gvrApp, handoff.ArgoNamespace, "root", stageAppStatus(p.commit, "Synced", "Healthy"), false)
	}
	return nil
}

func stageAppStatus(commit, sync, health string, resources ...any) map[string]any {
	return map[string]any{
		"sync":      map[string]any{"status": sync, "revision": commit},
		"health":    map[string]any{"status": health},
		"resources": resources,
	}
}

// handoffLab is a work dir, a site and a pipeline of configure and handoff against the real API
// server and a real Git server.
type handoffLab struct {
	t      *testing.T
	git    *gitrepotest.Server
	d      dynamic.Interface
	work   string
	site   *site.Site
	runner *pipeline.Runner
	mu     sync.Mutex
	events []pipeline.Event
}

func newHandoffLab(t *testing.T) *handoffLab {
	l := &handoffLab{t: t, git: gitrepotest.Start(t), work: filepath.Join(t.TempDir(), ".bootstrap")}
	cfg := apiServer.Config(t)
	l.d = clustertest.Dynamic(t, cfg)
	for _, ns := range []string{"openshift-marketplace", "openshift-config"} {
		ensureNS(t, l.d, ns)
	}
	if err := os.MkdirAll(l.work, 0o700); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		Kubeconfig(l.work): string(apiServer.Kubeconfig(t)),
		filepath.Join(l.work, "catalogsource-cs-redhat-operator-index.yaml"): "apiVersion: operators.coreos.com/v1alpha1\nkind: CatalogSource\n" +
			"metadata: {name: cs-redhat-operator-index, namespace: openshift-marketplace}\n" +
			"spec: {sourceType: grpc, image: registry.site.example:8443/redhat/redhat-operator-index:v4.20}\n",
		filepath.Join(l.work, "..", "git-ca.pem"): string(l.git.CA),
		filepath.Join(l.work, "..", "git-token"):  l.git.Password + "\n",
		filepath.Join(l.work, "..", "appsets.yaml"): "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata: {name: platform}\nspec:\n" +
			"  generators:\n  - list:\n      elements:\n      - {name: storage}\n" +
			"  template:\n    metadata: {name: '{{name}}'}\n    spec:\n      project: default\n" +
			"      source: {repoURL: " + l.git.URL + ", targetRevision: main, path: 'apps/{{name}}'}\n" +
			"      destination: {server: 'https://kubernetes.default.svc', namespace: '{{name}}'}\n",
	}
	for p, c := range files {
		if err := os.WriteFile(p, []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	l.site = &site.Site{
		Cluster:  site.Cluster{Name: "lab", BaseDomain: "example.com"},
		Registry: site.Registry{Host: "registry.site.example:8443"},
		Day1:     site.Day1{ModuleBlacklist: []site.ModuleBlacklist{}},
		GitOps: site.GitOps{Channel: "gitops-1.16", InstallPlanApproval: "Manual", RepoURL: l.git.URL, Revision: "main",
			Path: "clusters/lab", CAFile: filepath.Join(l.work, "..", "git-ca.pem"), Timeout: "20s",
			ApplicationSets: []string{filepath.Join(l.work, "..", "appsets.yaml")},
			Credentials:     site.GitCredentials{Username: l.git.Username, Password: site.SecretRef{File: filepath.Join(l.work, "..", "git-token")}}},
	}
	fast := []cluster.Option{cluster.WithPollInterval(100 * time.Millisecond)}
	l.runner = &pipeline.Runner{
		Stages:  []pipeline.Stage{Configure{ClientOptions: fast, Timeout: 20 * time.Second}, Handoff{ClientOptions: fast}},
		Site:    l.site,
		WorkDir: l.work,
		Sink:    func(e pipeline.Event) { l.mu.Lock(); l.events = append(l.events, e); l.mu.Unlock() },
	}
	return l
}

// run runs the pipeline and returns the events of that run, one line each.
func (l *handoffLab) run(replay string) (string, error) {
	l.mu.Lock()
	l.events = nil
	l.mu.Unlock()
	var err error
	if replay != "" {
		err = l.runner.Replay(context.Background(), replay, nil)
	} else {
		err = l.runner.Run(context.Background(), pipeline.RunOptions{})
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var b strings.Builder
	for _, e := range l.events {
		fmt.Fprintf(&b, "%s %s: %s\n", e.Stage, e.Kind, e.Message)
	}
	return b.String(), err
}

func (l *handoffLab) journal() []pipeline.Entry {
	l.t.Helper()
	es, _, err := pipeline.ReadJournal(pipeline.JournalPath(l.work))
	if err != nil {
		l.t.Fatal(err)
	}
	return es
}

// lastOutput is the output of the stage's last success.
func lastOutput(es []pipeline.Entry, stage string) []byte {
	var out []byte
	for _, e := range es {
		if e.Kind == pipeline.EntryStageSucceeded && e.Stage == stage {
			out = e.Data
		}
	}
	return out
}

// versions reads the resourceVersion of each object.
func (l *handoffLab) versions(refs []cluster.Ref) map[cluster.Ref]string {
	l.t.Helper()
	c, err := cluster.NewFromKubeconfig(Kubeconfig(l.work))
	if err != nil {
		l.t.Fatal(err)
	}
	out := map[cluster.Ref]string{}
	for _, r := range refs {
		u, err := c.Get(context.Background(), r)
		if err != nil {
			l.t.Fatalf("%s: %v", r, err)
		}
		out[r] = u.GetResourceVersion()
	}
	return out
}

func (l *handoffLab) setStatus(gvr schema.GroupVersionResource, ns, name string, status map[string]any, sub bool) {
	l.t.Helper()
	clustertest.MustSetStatus(l.t, l.d, gvr, ns, name, status, sub)
}

// TestHandoffStageThroughTheRunner drives configure and handoff through the pipeline runner
// against the real API server, with the controllers played by writing status and a real Git
// server over TLS: a wrong path stops the handoff before any change; the first run installs the
// operator (approving the Manual InstallPlan), gives Argo CD the repository and the root
// application and prints the console URL; a second run and a replay change nothing and say so;
// then a degraded child, a timeout and a failed CSV each fail the stage with the cause.
func TestHandoffStageThroughTheRunner(t *testing.T) {
	l := newHandoffLab(t)
	ctx := context.Background()

	// Before anything changes: the path is proven at the revision (configure, before it, runs).
	ctrl := startControllers(l.d, l.git.Commits[1])
	l.site.GitOps.Path = "clusters/labs"
	out, err := l.run("")
	var ge *gitrepo.Error
	if !errors.As(err, &ge) || ge.Step != gitrepo.StepPath || !strings.Contains(err.Error(), "clusters/ holds: lab/, prod/") {
		t.Fatalf("a missing gitops.path must stop the handoff: %v\n%s", err, out)
	}
	if f := lastFailure(l.journal(), "handoff"); !strings.Contains(f.Remedy, "set gitops.path") {
		t.Errorf("journaled remedy %q does not say to fix gitops.path", f.Remedy)
	}
	if _, err := l.d.Resource(gvrSub).Namespace(handoff.OperatorNamespace).Get(ctx, handoff.OperatorPackage, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the handoff changed the cluster before proving the repository: subscription %v", err)
	}
	l.site.GitOps.Path = "clusters/lab"

	// The first run of the handoff.
	out, err = l.run("")
	ctrl.Stop(t)
	if err != nil {
		t.Fatalf("first run: %v\n%s", err, out)
	}
	for _, want := range []string{
		"refs/heads/main is commit " + l.git.Commits[1],
		"approved InstallPlan " + stagePlan + " for " + stageCSV,
		"judging the Argo CD instance by Deployment openshift-gitops/openshift-gitops-server",
		"console https://" + argoHost,
		"handoff stage-succeeded",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("first run does not say %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, l.git.Password) {
		t.Error("the Git password is in the events")
	}
	plan, err := l.d.Resource(gvrPlan).Namespace(handoff.OperatorNamespace).Get(ctx, stagePlan, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ok, _, _ := unstructured.NestedBool(plan.Object, "spec", "approved"); !ok {
		t.Error("the Manual InstallPlan was not approved")
	}
	j := l.journal()
	first := lastOutput(j, "handoff")
	for _, want := range []string{`"installPlan":"` + stagePlan + `"`, `"sync":"Synced"`, `"health":"Healthy"`, `"revision":"` + l.git.Commits[1] + `"`,
		`"url":"https://` + argoHost + `"`, `"instance":"Deployment openshift-gitops/openshift-gitops-server"`} {
		if !bytes.Contains(first, []byte(want)) {
			t.Errorf("handoff output lacks %s: %s", want, first)
		}
	}
	raw, _ := os.ReadFile(pipeline.JournalPath(l.work))
	if bytes.Contains(raw, []byte(l.git.Password)) {
		t.Error("the Git password is in the journal")
	}
	var refs []cluster.Ref
	var ho HandoffOutput
	var co ConfigureOutput
	mustUnmarshal(t, first, &ho)
	mustUnmarshal(t, lastOutput(j, "configure"), &co)
	for _, o := range append(ho.Objects, co.Objects...) {
		refs = append(refs, o.Ref)
	}
	for _, want := range []string{"Subscription openshift-gitops-operator/openshift-gitops-operator", "Secret openshift-gitops/bootstrap-repository",
		"ConfigMap openshift-gitops/argocd-tls-certs-cm", "Application openshift-gitops/root", "ApplicationSet openshift-gitops/platform",
		"CatalogSource openshift-marketplace/cs-redhat-operator-index"} {
		if !strings.Contains(fmt.Sprint(refs), want) {
			t.Errorf("outputs do not name %s: %v", want, refs)
		}
	}
	refs = append(refs,
		cluster.Ref{APIVersion: cluster.OperatorsV1a1, Kind: "InstallPlan", Namespace: handoff.OperatorNamespace, Name: stagePlan},
		cluster.Ref{APIVersion: cluster.OperatorsV1a1, Kind: "ClusterServiceVersion", Namespace: handoff.OperatorNamespace, Name: stageCSV})
	rv := l.versions(refs)

	// A second run: both stages verified and skipped, nothing written, nothing journaled but the skips.
	before := len(j)
	out, err = l.run("")
	if err != nil {
		t.Fatalf("second run: %v\n%s", err, out)
	}
	for _, st := range []string{"configure", "handoff"} {
		if !strings.Contains(out, st+" stage-skipped: finished with the same inputs; verified") {
			t.Errorf("second run does not say %s was skipped:\n%s", st, out)
		}
	}
	for _, e := range l.journal()[before:] {
		if e.Kind != pipeline.EntryRunStarted && e.Kind != pipeline.EntryRunFinished && e.Kind != pipeline.EntryStageSkipped {
			t.Errorf("second run journaled %s %s %s", e.Kind, e.Stage, e.Step)
		}
	}
	if got := l.versions(refs); !maps.Equal(got, rv) {
		t.Errorf("second run changed objects:\nbefore %v\nafter  %v", rv, got)
	}

	// A replay runs the stage again: it applies everything, nothing changes, it says so and
	// finishes with the same output.
	out, err = l.run("handoff")
	if err != nil {
		t.Fatalf("replay: %v\n%s", err, out)
	}
	if !strings.Contains(out, fmt.Sprintf("nothing changed: all %d objects were already as applied", len(ho.Objects))) {
		t.Errorf("replay does not say nothing changed:\n%s", out)
	}
	if strings.Contains(out, "approved InstallPlan") {
		t.Errorf("replay approved the InstallPlan again:\n%s", out)
	}
	if again := lastOutput(l.journal(), "handoff"); !bytes.Equal(again, first) {
		t.Errorf("replay output differs:\n%s\n%s", first, again)
	}
	if strings.Contains(out, "configure stage-stale") {
		t.Errorf("replay marked a stage stale:\n%s", out)
	}
	if got := l.versions(refs); !maps.Equal(got, rv) {
		t.Errorf("replay changed objects:\nbefore %v\nafter  %v", rv, got)
	}

	// Argo CD reports the root application Degraded because of a child: the run verifies,
	// runs the handoff again, and fails naming the child and its first degraded resource.
	clustertest.Create(t, l.d, gvrApp, map[string]any{"apiVersion": handoff.ArgoV1a1, "kind": "Application",
		"metadata": map[string]any{"name": "storage", "namespace": handoff.ArgoNamespace},
		"spec": map[string]any{"project": "default", "destination": map[string]any{"server": "https://kubernetes.default.svc"},
			"source": map[string]any{"repoURL": l.git.URL, "path": "storage"}}})
	l.setStatus(gvrApp, handoff.ArgoNamespace, "storage", stageAppStatus(l.git.Commits[1], "Synced", "Degraded",
		map[string]any{"kind": "Deployment", "group": "apps", "name": "lvms-operator", "namespace": "openshift-storage",
			"health": map[string]any{"status": "Degraded", "message": `Deployment "lvms-operator" exceeded its progress deadline`}}), false)
	l.setStatus(gvrApp, handoff.ArgoNamespace, "root", stageAppStatus(l.git.Commits[1], "Synced", "Degraded",
		map[string]any{"kind": "Application", "group": "argoproj.io", "name": "storage", "namespace": handoff.ArgoNamespace, "health": map[string]any{"status": "Degraded"}}), false)
	out, err = l.run("")
	var fe *cluster.FailedError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(),
		`first degraded child: Application storage: Deployment openshift-storage/lvms-operator: Deployment "lvms-operator" exceeded its progress deadline`) {
		t.Fatalf("degraded: %v\n%s", err, out)
	}
	if !strings.Contains(out, "handoff stage-started: verify: root application openshift-gitops/root: Degraded") {
		t.Errorf("the run does not say why the handoff ran again:\n%s", out)
	}
	if f := lastFailure(l.journal(), "handoff"); !strings.Contains(f.Error, "Application storage") || f.Remedy == "" {
		t.Errorf("journaled failure %q (remedy %q) does not name the degraded child", f.Error, f.Remedy)
	}

	// Argo CD never finishes syncing: the wait times out and says what it saw last.
	l.setStatus(gvrApp, handoff.ArgoNamespace, "root", stageAppStatus(l.git.Commits[1], "OutOfSync", "Progressing"), false)
	l.setStatus(gvrApp, handoff.ArgoNamespace, "storage", stageAppStatus(l.git.Commits[1], "Synced", "Healthy"), false)
	l.site.GitOps.Timeout = "1s"
	out, err = l.run("")
	var te *cluster.TimeoutError
	if !errors.As(err, &te) || !strings.Contains(err.Error(), "Application openshift-gitops/root: not Synced and Healthy after 1s (last seen: sync OutOfSync, health Progressing)") {
		t.Fatalf("timeout: %v\n%s", err, out)
	}

	// The operator's CSV fails: the handoff stops there.
	l.setStatus(gvrApp, handoff.ArgoNamespace, "root", stageAppStatus(l.git.Commits[1], "Synced", "Healthy"), false)
	l.setStatus(gvrCSV, handoff.OperatorNamespace, stageCSV, map[string]any{
		"phase": "Failed", "reason": "InstallCheckFailed", "message": "install timeout"}, true)
	l.site.GitOps.Timeout = "20s"
	out, err = l.run("")
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "ClusterServiceVersion openshift-gitops-operator/"+stageCSV+": Failed (InstallCheckFailed): install timeout") {
		t.Fatalf("failed CSV: %v\n%s", err, out)
	}
}

func mustUnmarshal(t *testing.T, data []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", data, err)
	}
}

// lastFailure is the stage's last stage-failed entry.
func lastFailure(es []pipeline.Entry, stage string) pipeline.Entry {
	var out pipeline.Entry
	for _, e := range es {
		if e.Kind == pipeline.EntryStageFailed && e.Stage == stage {
			out = e
		}
	}
	return out
}
