package handoff

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/bootstrap-dev/bootstrap/internal/cluster"
)

// Defaults of OpenShift GitOps.
const (
	OperatorPackage   = "openshift-gitops-operator"
	OperatorNamespace = "openshift-gitops-operator"
	ArgoNamespace     = "openshift-gitops"
	// ServerDeployment and ServerRoute are what the operator creates for the default instance.
	ServerDeployment = "openshift-gitops-server"
	ServerRoute      = "openshift-gitops-server"
	RepoSecretName   = "bootstrap-repository"
	ArgoV1a1         = "argoproj.io/v1alpha1"
)

// Options is what the handoff installs and waits for.
type Options struct {
	// Channel of the operator's package (default "latest").
	Channel string
	// Manual approval of the InstallPlan ("Manual"), else Automatic.
	Approval string
	// Source and SourceNamespace name the mirrored CatalogSource that carries the operator.
	Source          string
	SourceNamespace string
	Repo            Repo
	RootApp         RootApp
	// ApplicationSets are applied after the root application (namespace defaults to ArgoNamespace).
	ApplicationSets []*unstructured.Unstructured
	// Timeout bounds each wait; default 20 minutes.
	Timeout time.Duration
	// Patience is how long Argo CD may report a problem with an Application (an error
	// condition, Degraded health, a failed sync) before the handoff fails on it; default
	// defaultPatience.
	Patience time.Duration
	// AppsDomain ("apps.<cluster>.<baseDomain>") gives the Argo CD URL when no Route is found.
	AppsDomain string
	// Commit, when set, is the full commit id the repository's revision named when it was
	// checked from the jump host: the handoff is done only when Argo CD reports the root
	// application Synced and Healthy at that commit, not at one it fetched earlier.
	Commit string
}

// Repo is the Git repository Argo CD reads, with its credentials. The credential values are held
// only in memory, written only into the cluster Secret, and never returned.
type Repo struct {
	URL      string
	Revision string
	Path     string
	Username string
	Password string
	// SSHPrivateKey and KnownHosts are used for ssh:// and scp-like URLs.
	SSHPrivateKey []byte
	KnownHosts    []byte
	// CA is the Git server's CA (PEM) for an https URL.
	CA []byte
}

// RootApp names the app-of-apps Application.
type RootApp struct {
	Name    string // default "root"
	Project string // default "default"
}

// Result is what the handoff did and saw; it holds no secret values.
type Result struct {
	Applied []cluster.Applied `json:"applied"`
	Changed int               `json:"changed"`
	// CSV is the operator's ClusterServiceVersion; ApprovedInstallPlan is set when we approved one.
	CSV string `json:"csv"`
	// InstallPlan is the plan OLM resolved the Subscription with; ApprovedInstallPlan is set
	// when this run approved it (Manual approval).
	InstallPlan         string `json:"installPlan,omitempty"`
	ApprovedInstallPlan string `json:"approvedInstallPlan,omitempty"`
	// Instance is the object the Argo CD instance was judged available by: its ArgoCD resource,
	// or the server Deployment when the cluster does not serve that kind.
	Instance string `json:"instance"`
	RootApp  string `json:"rootApp"`
	Sync     string `json:"sync"`
	Health   string `json:"health"`
	Revision string `json:"revision,omitempty"`
	URL      string `json:"url,omitempty"`
}

func (o *Options) defaults() {
	if o.Channel == "" {
		o.Channel = "latest"
	}
	if o.Approval == "" {
		o.Approval = "Automatic"
	}
	if o.SourceNamespace == "" {
		o.SourceNamespace = "openshift-marketplace"
	}
	if o.RootApp.Name == "" {
		o.RootApp.Name = "root"
	}
	if o.RootApp.Project == "" {
		o.RootApp.Project = "default"
	}
	if o.Repo.Revision == "" {
		o.Repo.Revision = "HEAD"
	}
	if o.Repo.Path == "" {
		o.Repo.Path = "."
	}
	if o.Timeout <= 0 {
		o.Timeout = 20 * time.Minute
	}
}

func (o *Options) validate() error {
	switch {
	case o.Source == "":
		return fmt.Errorf("handoff: no CatalogSource carries %s: mirror the package and name its catalog", OperatorPackage)
	case o.Repo.URL == "":
		return fmt.Errorf("handoff: gitops.repoURL is empty")
	case o.Approval != "Automatic" && o.Approval != "Manual":
		return fmt.Errorf("handoff: gitops.installPlanApproval %q: want Automatic or Manual", o.Approval)
	}
	return nil
}

// Run installs OpenShift GitOps, gives Argo CD the repository and the root application, and waits
// until Argo CD reports the root application Synced and Healthy.
func Run(ctx context.Context, c *cluster.Client, o Options, progress cluster.Progress) (Result, error) {
	o.defaults()
	res := Result{RootApp: ArgoNamespace + "/" + o.RootApp.Name}
	if err := o.validate(); err != nil {
		return res, err
	}
	// Built first so a bad URL or missing credential stops the run before anything changes.
	repo, err := repoObjects(o.Repo)
	if err != nil {
		return res, err
	}
	say := func(format string, a ...any) {
		if progress != nil {
			progress(fmt.Sprintf(format, a...))
		}
	}
	apply := func(objs ...*unstructured.Unstructured) error {
		ar, err := c.Apply(ctx, objs, nil, progress)
		res.Applied = append(res.Applied, ar.Objects...)
		res.Changed += ar.Changed()
		return err
	}

	// 1. The operator.
	if err := apply(operatorObjects(o)...); err != nil {
		return res, err
	}
	csv, plan, approved, err := waitOperator(ctx, c, o, progress)
	res.CSV, res.InstallPlan, res.ApprovedInstallPlan = csv, plan, approved
	if err != nil {
		return res, err
	}
	say("operator %s succeeded", csv)
	inst, err := WaitInstance(ctx, c, o.Timeout, progress)
	res.Instance = inst
	if err != nil {
		return res, err
	}
	say("Argo CD instance available (judged by %s)", inst)

	// 2. The repository, its trust, the root application and the ApplicationSets.
	if err := apply(repo...); err != nil {
		return res, err
	}
	if err := apply(rootApplication(o)); err != nil {
		return res, err
	}
	for _, as := range o.ApplicationSets {
		if as.GetNamespace() == "" {
			as.SetNamespace(ArgoNamespace)
		}
	}
	if err := apply(o.ApplicationSets...); err != nil {
		return res, err
	}

	// 3. Argo CD's verdict.
	st, err := waitApplication(ctx, c, o.RootApp.Name, o.Commit, o.Timeout, o.Patience, progress)
	res.Sync, res.Health, res.Revision = st.Sync, st.Health, st.Revision
	if err != nil {
		return res, err
	}
	res.URL = URL(ctx, c, o.AppsDomain)
	return res, nil
}

// URL is the Argo CD console address: the host of the server Route, else the host the ArgoCD
// resource reports, else the default host under appsDomain, else "".
func URL(ctx context.Context, c *cluster.Client, appsDomain string) string {
	r, err := c.Get(ctx, cluster.Ref{APIVersion: "route.openshift.io/v1", Kind: "Route", Namespace: ArgoNamespace, Name: ServerRoute})
	if err == nil {
		if h, _, _ := unstructured.NestedString(r.Object, "spec", "host"); h != "" {
			return "https://" + h
		}
	}
	if served, _ := c.Served(ArgoV1b1, "ArgoCD"); served {
		if u, err := c.Get(ctx, instanceRef()); err == nil {
			if h := nested(u, "status", "host"); h != "" {
				return "https://" + strings.TrimPrefix(h, "https://")
			}
		}
	}
	if appsDomain != "" {
		return "https://" + ServerRoute + "-" + ArgoNamespace + "." + appsDomain
	}
	return ""
}

// Verify checks, read-only, that Argo CD still reports the root application, and every other
// Application in ArgoNamespace, Synced and Healthy.
func Verify(ctx context.Context, c *cluster.Client, rootApp string) error {
	if rootApp == "" {
		rootApp = "root"
	}
	u, err := c.Get(ctx, appRef(rootApp))
	if err != nil {
		return fmt.Errorf("root application: %w", err)
	}
	if state, msg := appCheck(u); state != cluster.Done {
		return fmt.Errorf("root application %s/%s: %s", ArgoNamespace, rootApp, msg)
	}
	apps, err := c.List(ctx, ArgoV1a1, "Application", ArgoNamespace, "")
	if err != nil {
		return fmt.Errorf("applications: %w", err)
	}
	sort.Slice(apps, func(i, j int) bool { return apps[i].GetName() < apps[j].GetName() })
	for i := range apps {
		if state, msg := appCheck(&apps[i]); state != cluster.Done {
			return fmt.Errorf("Application %s/%s: %s", ArgoNamespace, apps[i].GetName(), msg)
		}
	}
	return nil
}
