package stages

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/cluster"
	"github.com/bootstrap-dev/bootstrap/internal/fsroot"
	"github.com/bootstrap-dev/bootstrap/internal/gitrepo"
	"github.com/bootstrap-dev/bootstrap/internal/handoff"
	"github.com/bootstrap-dev/bootstrap/internal/mirror"
	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
	"github.com/bootstrap-dev/bootstrap/internal/preflight"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// Handoff is the handoff stage: install OpenShift GitOps from the mirrored catalog, give Argo CD
// the repository and the root application, and finish when Argo CD reports it Synced and Healthy.
type Handoff struct {
	// ClientOptions tune the Kubernetes client (tests shorten the poll interval).
	ClientOptions []cluster.Option
	// SkipGitCheck skips proving the repository, revision and path from the jump host before
	// any change (for a Git server only the cluster can reach).
	SkipGitCheck bool
	// Patience is how long Argo CD may report a problem with an Application before the stage
	// fails on it (default handoff.DefaultPatience; tests shorten it).
	Patience time.Duration
}

// Name implements pipeline.Stage.
func (Handoff) Name() string { return NameHandoff }

// Summary implements pipeline.Stage.
func (Handoff) Summary() string { return summary(NameHandoff) }

type handoffInputs struct {
	GitOps site.GitOps `json:"gitops"` // references and paths only: secret values are never in the profile
	// Files are the SHA-256 of the CA, SSH key, known_hosts and ApplicationSet files.
	Files  map[string]string `json:"files"`
	Source string            `json:"source"`
}

// Inputs implements pipeline.Stage.
func (Handoff) Inputs(env *pipeline.Env) (any, error) {
	g := env.Site.GitOps
	in := handoffInputs{GitOps: g, Files: map[string]string{}}
	for _, f := range append([]string{g.CAFile, g.Credentials.SSHKeyFile, g.Credentials.KnownHostsFile}, g.ApplicationSets...) {
		if f == "" {
			continue
		}
		h, err := fileSHA256(f)
		if err != nil {
			return nil, fmt.Errorf("handoff: %w", err)
		}
		in.Files[f] = h
	}
	src, err := gitopsSource(env.WorkDir)
	if err != nil {
		return nil, err
	}
	in.Source = src
	return in, nil
}

// gitopsSource picks the mirrored CatalogSource the operator comes from: the one named like Red
// Hat's operator index when there are several (openshift-gitops-operator ships in it), else the
// only one.
func gitopsSource(workDir string) (string, error) {
	files, err := cluster.Glob(filepath.Join(workDir, mirror.CatalogSourcePattern))
	if err != nil {
		return "", err
	}
	objs, err := cluster.ReadFiles(files...)
	if err != nil {
		return "", err
	}
	var names []string
	for _, u := range objs {
		if u.GetKind() != "CatalogSource" {
			continue
		}
		if strings.Contains(u.GetName(), "redhat-operator") {
			return u.GetName(), nil
		}
		names = append(names, u.GetName())
	}
	if len(names) == 0 {
		return "", fmt.Errorf("handoff: no CatalogSource ("+mirror.CatalogSourcePattern+") in %s: mirror the redhat-operator-index with openshift-gitops-operator", workDir)
	}
	return names[0], nil
}

// handoffOptions reads the secrets at the moment of use; the result is never journaled.
func handoffOptions(env *pipeline.Env) (handoff.Options, error) {
	s := env.Site
	g := s.GitOps
	o := handoff.Options{
		Channel: g.Channel, Approval: g.InstallPlanApproval,
		Repo:       handoff.Repo{URL: g.RepoURL, Revision: g.Revision, Path: g.Path, Username: g.Credentials.Username},
		RootApp:    handoff.RootApp{Name: g.RootApp.Name, Project: g.RootApp.Project},
		AppsDomain: "apps." + s.Cluster.Name + "." + s.Cluster.BaseDomain,
	}
	if g.RootApp.Namespace != "" && g.RootApp.Namespace != handoff.ArgoNamespace {
		return o, fmt.Errorf("handoff: gitops.rootApp.namespace %q: the default Argo CD instance reads %s", g.RootApp.Namespace, handoff.ArgoNamespace)
	}
	if g.Timeout != "" {
		d, err := time.ParseDuration(g.Timeout)
		if err != nil {
			return o, fmt.Errorf("handoff: gitops.timeout %q: %w", g.Timeout, err)
		}
		o.Timeout = d
	}
	var err error
	if o.Source, err = gitopsSource(env.WorkDir); err != nil {
		return o, err
	}
	if !g.Credentials.Password.IsZero() {
		b, err := site.ReadSecret(g.Credentials.Password)
		if err != nil {
			return o, fmt.Errorf("handoff: gitops.credentials.password: %w", err)
		}
		o.Repo.Password = string(b)
	}
	if g.Credentials.SSHKeyFile != "" {
		if o.Repo.SSHPrivateKey, err = site.ReadSecretFile(g.Credentials.SSHKeyFile); err != nil {
			return o, fmt.Errorf("handoff: gitops.credentials.sshKeyFile: %w", err)
		}
	}
	for _, f := range []struct {
		path string
		dst  *[]byte
	}{{g.Credentials.KnownHostsFile, &o.Repo.KnownHosts}, {g.CAFile, &o.Repo.CA}} {
		if f.path == "" {
			continue
		}
		if *f.dst, err = fsroot.ReadFile(f.path, fsroot.PEM); err != nil {
			return o, fmt.Errorf("handoff: %w", err)
		}
	}
	for _, f := range g.ApplicationSets {
		objs, err := cluster.ReadFiles(f)
		if err != nil {
			return o, err
		}
		o.ApplicationSets = append(o.ApplicationSets, objs...)
	}
	return o, nil
}

// Run implements pipeline.Stage.
func (st Handoff) Run(ctx context.Context, env *pipeline.Env) (any, error) {
	ev := stageEvents(env, NameHandoff)
	o, err := handoffOptions(env)
	if err != nil {
		return nil, err
	}
	if !st.SkipGitCheck {
		// Before changing anything: the server answers with this CA (or host key) and these
		// credentials, the revision exists and the path is a directory at it (as preflight's
		// git checks prove; the repository may have changed since).
		r := o.Repo
		pctx, cancel := context.WithTimeout(ctx, preflight.GitTimeout)
		proof, err := gitrepo.Prove(pctx, gitrepo.Repo{URL: r.URL, Revision: r.Revision, Path: r.Path,
			Username: r.Username, Password: r.Password, CA: r.CA, SSHKey: r.SSHPrivateKey, KnownHosts: r.KnownHosts, Dir: env.WorkDir})
		cancel()
		if err != nil {
			return nil, fmt.Errorf("handoff: nothing changed: %w", err)
		}
		ev(pipeline.Info, "", fmt.Sprintf("%s: %s is commit %s; %s is a directory there", r.URL, revisionName(proof), proof.Commit, proof.Path))
		o.Commit = proof.Commit // Argo CD must report the root application synced at this commit
	}
	changes := newChangeLog(env)
	c, err := cluster.NewFromKubeconfig(Kubeconfig(env.WorkDir), append(st.ClientOptions[:len(st.ClientOptions):len(st.ClientOptions)], changes.option())...)
	if err != nil {
		return nil, fmt.Errorf("handoff: %w", err)
	}
	o.Patience = st.Patience
	res, err := handoff.Run(ctx, c, o, func(m string) { ev(pipeline.Info, "", m) })
	if rerr := changes.done(ev, res.Applied, res.Changed); rerr != nil && err == nil {
		err = rerr
	}
	if err != nil {
		return nil, fmt.Errorf("handoff: %w", err)
	}
	ev(pipeline.Info, "", fmt.Sprintf("Argo CD owns the cluster now: %s is %s and %s at %s; console %s",
		res.RootApp, res.Sync, res.Health, res.Revision, res.URL))
	return HandoffOutput{Objects: appliedObjects(res.Applied), CSV: res.CSV, InstallPlan: res.InstallPlan, Instance: res.Instance,
		RootApp: res.RootApp, Sync: res.Sync, Health: res.Health, Revision: res.Revision, URL: res.URL}, nil
}

// HandoffOutput is the journaled output of the handoff stage: what Argo CD was given and what it
// reports, the same on every run that changes nothing. It holds no secret values.
type HandoffOutput struct {
	Objects []AppliedObject `json:"objects"`
	// CSV is the operator's ClusterServiceVersion, InstallPlan the plan that installed it.
	CSV         string `json:"csv"`
	InstallPlan string `json:"installPlan,omitempty"`
	// Instance is the object the Argo CD instance was judged available by.
	Instance string `json:"instance"`
	RootApp  string `json:"rootApp"`
	Sync     string `json:"sync"`
	Health   string `json:"health"`
	Revision string `json:"revision,omitempty"`
	// URL is the Argo CD console.
	URL string `json:"url,omitempty"`
}

// Verify implements pipeline.Verifier: Argo CD still reports the root application and every
// other Application Synced and Healthy.
func (st Handoff) Verify(ctx context.Context, env *pipeline.Env) error {
	c, err := cluster.NewFromKubeconfig(Kubeconfig(env.WorkDir), st.ClientOptions...)
	if err != nil {
		return err
	}
	return handoff.Verify(ctx, c, env.Site.GitOps.RootApp.Name)
}

// revisionName is how a proof names the revision: the ref, or "the commit" for a commit id.
func revisionName(p gitrepo.Proof) string {
	if p.Ref == "" {
		return "the revision"
	}
	return p.Ref
}
