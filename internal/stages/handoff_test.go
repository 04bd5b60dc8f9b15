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
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/bootstrap-dev/bootstrap/internal/cluster"
	"github.com/bootstrap-dev/bootstrap/internal/cluster/clustertest"
	"github.com/bootstrap-dev/bootstrap/internal/gitrepo"
	"github.com/bootstrap-dev/bootstrap/internal/gitrepo/gitrepotest"
	"github.com/bootstrap-dev/bootstrap/internal/handoff"
	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

const (
	stageCSV  = "openshift-gitops-operator.v1.16.2"
	stagePlan = "install-stage1"
	argoHost  = "openshift-gitops-server-openshift-gitops.apps.lab.example.com"
)

// handoffLab is a work dir, a site and a pipeline of configure and handoff against the real API
// server and a real Git server.
type handoffLab struct {
	t      *testing.T
	git    *gitrepotest.Server
	head   string // main's commit
	kube   string // the API server's kubeconfig
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
		filepath.Join(l.work, "cs-redhat-operator-index.yaml"): "apiVersion: operators.coreos.com/v1alpha1\nkind: CatalogSource\n" +
			"metadata: {name: cs-redhat-operator-index, namespace: openshift-marketplace}\n" +
			"spec: {sourceType: grpc, image: registry.site.example:8443/redhat/redhat-operator-index:v4.20}\n",
		filepath.Join(l.work, "..", "git-ca.pem"): string(l.git.CA),
		filepath.Join(l.work, "..", "git-token"):  l.git.Password + "\n",
		filepath.Join(l.work, "..", "appsets.yaml"): "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata: {name: platform}\nspec:\n" +
			"  generators:\n  - list:\n      elements:\n      - {name: storage}\n" +
			"  template:\n    metadata: {name: '{{name}}'}\n    spec:\n      project: default\n" +
			"      source: {repoURL: " + l.git.URL + ", targetRevision: main, path: 'apps/{{name}}'}\n" +
			"      destination: {server: 'https://kubernetes.default.svc', namespace: '{{name}}'}\n" +
			"      syncPolicy: {automated: {prune: true, selfHeal: true}, syncOptions: [CreateNamespace=true]}\n",
	}
	for p, c := range files {
		if err := os.WriteFile(p, []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	l.kube = Kubeconfig(l.work)
	// What the ApplicationSet's Application deploys.
	l.head = l.git.Commit(t, "refs/heads/main", map[string]string{
		"apps/storage/config.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: storage-settings\ndata:\n  class: local-nvme\n"})
	l.site = &site.Site{
		Cluster:  site.Cluster{Name: "lab", BaseDomain: "example.com"},
		Registry: site.Registry{Host: "registry.site.example:8443"},
		Day1:     site.Day1{ModuleBlacklist: []site.ModuleBlacklist{}},
		GitOps: site.GitOps{Channel: "gitops-1.16", InstallPlanApproval: "Manual", RepoURL: l.git.URL, Revision: "main",
			Path: "clusters/lab", CAFile: filepath.Join(l.work, "..", "git-ca.pem"), Timeout: "4m",
			ApplicationSets: []string{filepath.Join(l.work, "..", "appsets.yaml")},
			Credentials:     site.GitCredentials{Username: l.git.Username, Password: site.SecretRef{File: filepath.Join(l.work, "..", "git-token")}}},
	}
	fast := []cluster.Option{cluster.WithPollInterval(100 * time.Millisecond)}
	l.runner = &pipeline.Runner{
		Stages:  []pipeline.Stage{Configure{ClientOptions: fast, Timeout: 20 * time.Second}, Handoff{ClientOptions: fast, Patience: 10 * time.Second}},
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

// versions reads the resourceVersion of each object; for Argo CD's Applications and
// ApplicationSets, whose status Argo CD keeps writing, their spec instead.
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
		if r.Kind == "Application" || r.Kind == "ApplicationSet" {
			spec, _ := json.Marshal(u.Object["spec"])
			out[r] = string(spec)
		}
	}
	return out
}

func (l *handoffLab) setStatus(gvr schema.GroupVersionResource, ns, name string, status map[string]any, sub bool) {
	l.t.Helper()
	clustertest.MustSetStatus(l.t, l.d, gvr, ns, name, status, sub)
}

// TestHandoffStageThroughTheRunner drives configure and handoff through the pipeline runner
// against the real API server, OLM and the deployment controller played by writing status, Argo
// CD's own controllers and a real Git server over TLS: a wrong path stops the handoff before any
// change; the first run installs the operator (approving the Manual InstallPlan), gives Argo CD
// the repository, the root application and the ApplicationSet, waits for Argo CD's verdict and
// prints the console URL; a second run and a replay change nothing and say so; then a degraded
// child, a timeout and a failed CSV each fail the stage with the cause.
func TestHandoffStageThroughTheRunner(t *testing.T) {
	l := newHandoffLab(t)
	ctx := context.Background()

	// Before anything changes: the path is proven at the revision (configure, before it, runs).
	ctrl := startControllers(t, l.d, l.kube)
	defer ctrl.Stop(t)
	l.site.GitOps.Path = "clusters/labs"
	out, err := l.run("")
	var ge *gitrepo.Error
	if !errors.As(err, &ge) || ge.Step != gitrepo.StepPath || !strings.Contains(err.Error(), "clusters/ holds: lab/, prod/") {
		t.Fatalf("a missing gitops.path must stop the handoff: %v\n%s", err, out)
	}
	if f := lastFailure(l.journal(), "handoff"); !strings.Contains(f.Remedy, "set gitops.path") {
		t.Errorf("journaled remedy %q does not say to fix gitops.path", f.Remedy)
	}
	if _, err := l.d.Resource(clustertest.Subscriptions).Namespace(handoff.OperatorNamespace).Get(ctx, handoff.OperatorPackage, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the handoff changed the cluster before proving the repository: subscription %v", err)
	}
	l.site.GitOps.Path = "clusters/lab"

	// The first run of the handoff.
	out, err = l.run("")
	if err != nil {
		t.Fatalf("first run: %v\n%s", err, out)
	}
	for _, want := range []string{
		"refs/heads/main is commit " + l.head,
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
	plan, err := l.d.Resource(clustertest.InstallPlans).Namespace(handoff.OperatorNamespace).Get(ctx, stagePlan, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ok, _, _ := unstructured.NestedBool(plan.Object, "spec", "approved"); !ok {
		t.Error("the Manual InstallPlan was not approved")
	}
	j := l.journal()
	first := lastOutput(j, "handoff")
	for _, want := range []string{`"installPlan":"` + stagePlan + `"`, `"sync":"Synced"`, `"health":"Healthy"`, `"revision":"` + l.head + `"`,
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
	// Each change is journaled as it is made, one step per object and per approval (so a killed
	// attempt's changes are on record): configure's and handoff's objects, and the approval.
	for _, stage := range []struct {
		name string
		objs []AppliedObject
	}{{"configure", co.Objects}, {"handoff", ho.Objects}} {
		var steps []string
		for _, e := range j {
			if e.Kind == pipeline.EntryStepDone && e.Stage == stage.name && e.Step == AppliedStep {
				var rec appliedRecord
				mustUnmarshal(t, e.Data, &rec)
				if len(rec.Objects) != 1 {
					t.Errorf("%s: an applied step with %d objects, want one per step", stage.name, len(rec.Objects))
				}
				for _, o := range rec.Objects {
					steps = append(steps, o.Kind+" "+o.Name+" "+string(o.Action))
				}
			}
		}
		want := len(stage.objs)
		if stage.name == "handoff" {
			want++ // the InstallPlan approval
			if !strings.Contains(strings.Join(steps, ","), "InstallPlan "+stagePlan+" patched") {
				t.Errorf("the InstallPlan approval is not journaled: %v", steps)
			}
		}
		if len(steps) != want {
			t.Errorf("%s journaled %d applied steps, want %d: %v", stage.name, len(steps), want, steps)
		}
	}
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

	// Argo CD reports a child Degraded: the storage Application's Deployment passed its progress
	// deadline. The run verifies, runs the handoff again, and fails naming the child, its
	// degraded resource and Argo CD's message.
	ctrl.SetDeployments("deadline")
	l.git.Commit(t, "refs/heads/main", map[string]string{"apps/storage/deployment.yaml": clustertest.DeploymentYAML("lvms-operator", "")})
	l.waitApp("storage", "Degraded")
	out, err = l.run("")
	var fe *cluster.FailedError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(),
		`Application storage: Degraded: Deployment storage/lvms-operator: Deployment "lvms-operator" exceeded its progress deadline`) {
		t.Fatalf("degraded: %v\n%s", err, out)
	}
	if !strings.Contains(out, "handoff stage-started: verify: Application openshift-gitops/storage: Degraded") {
		t.Errorf("the run does not say why the handoff ran again:\n%s", out)
	}
	if f := lastFailure(l.journal(), "handoff"); !strings.Contains(f.Error, "Application storage") || f.Remedy == "" {
		t.Errorf("journaled failure %q (remedy %q) does not name the degraded child", f.Error, f.Remedy)
	}

	// Argo CD never finishes: the Deployment waits for its pod. The wait times out and says
	// what it saw last.
	ctrl.SetDeployments("progressing")
	l.waitApp("storage", "Progressing")
	l.site.GitOps.Timeout = "1s"
	out, err = l.run("")
	var te *cluster.TimeoutError
	if !errors.As(err, &te) || !strings.Contains(err.Error(), "not every Application Synced and Healthy after 1s (last seen: Application storage: sync Synced, health Progressing") {
		t.Fatalf("timeout: %v\n%s", err, out)
	}
	ctrl.SetDeployments("available")
	l.waitApp("storage", "Healthy")

	// The operator's CSV fails: the handoff stops there.
	l.setStatus(clustertest.ClusterServiceVersions, handoff.OperatorNamespace, stageCSV, map[string]any{
		"phase": "Failed", "reason": "InstallCheckFailed", "message": "install timeout"}, true)
	l.site.GitOps.Timeout = "4m"
	out, err = l.run("")
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "ClusterServiceVersion openshift-gitops-operator/"+stageCSV+": Failed (InstallCheckFailed): install timeout") {
		t.Fatalf("failed CSV: %v\n%s", err, out)
	}

	// Where the cluster serves the operator's ArgoCD kind, its verdict decides: Failed components
	// stop the handoff, Available with the server Running lets it finish, and the output says
	// which object decided.
	l.setStatus(clustertest.ClusterServiceVersions, handoff.OperatorNamespace, stageCSV, map[string]any{
		"phase": "Succeeded", "reason": "InstallSucceeded", "message": "install strategy completed with no errors"}, true)
	clustertest.InstallCRD(t, apiServer.Config(t), clustertest.ArgoCDCRD())
	clustertest.Create(t, l.d, clustertest.ArgoCDs, map[string]any{"apiVersion": handoff.ArgoV1b1, "kind": "ArgoCD",
		"metadata": map[string]any{"name": handoff.InstanceName, "namespace": handoff.ArgoNamespace}, "spec": map[string]any{}})
	l.setStatus(clustertest.ArgoCDs, handoff.ArgoNamespace, handoff.InstanceName, map[string]any{
		"phase": "Failed", "server": "Running", "repo": "Failed", "applicationController": "Running", "redis": "Running"}, true)
	out, err = l.run("")
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "ArgoCD openshift-gitops/openshift-gitops: phase Failed, server Running; failed: repo") {
		t.Fatalf("failed Argo CD instance: %v\n%s", err, out)
	}
	l.setStatus(clustertest.ArgoCDs, handoff.ArgoNamespace, handoff.InstanceName, map[string]any{
		"phase": "Available", "server": "Running", "repo": "Running", "applicationController": "Running", "redis": "Running"}, true)
	out, err = l.run("")
	if err != nil {
		t.Fatalf("available Argo CD instance: %v\n%s", err, out)
	}
	mustUnmarshal(t, lastOutput(l.journal(), "handoff"), &ho)
	if ho.Instance != "ArgoCD openshift-gitops/openshift-gitops" || !strings.Contains(out, "Argo CD instance available (judged by ArgoCD openshift-gitops/openshift-gitops)") {
		t.Errorf("instance judged by %q, want the ArgoCD resource:\n%s", ho.Instance, out)
	}
}

// waitApp waits until Argo CD reports the Application's health as want, asking it to refresh
// (as a Git server's webhook would) so it sees main's newest commit.
func (l *handoffLab) waitApp(name, health string) {
	l.t.Helper()
	ctx := context.Background()
	refresh := []byte(`{"metadata":{"annotations":{"` + handoff.RefreshAnnotation + `":"normal"}}}`)
	if _, err := l.d.Resource(clustertest.Applications).Namespace(handoff.ArgoNamespace).Patch(ctx, name, types.MergePatchType, refresh, metav1.PatchOptions{}); err != nil {
		l.t.Fatal(err)
	}
	var last string
	for deadline := time.Now().Add(3 * time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		u, err := l.d.Resource(clustertest.Applications).Namespace(handoff.ArgoNamespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			l.t.Fatal(err)
		}
		if last, _, _ = unstructured.NestedString(u.Object, "status", "health", "status"); last == health {
			return
		}
	}
	l.t.Fatalf("Argo CD reports Application %s %s after 3m, want %s", name, last, health)
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
