package stages

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/agentiso"
	"github.com/bootstrap-dev/bootstrap/internal/cluster"
	"github.com/bootstrap-dev/bootstrap/internal/gather"
	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// Configure is the configure stage: server-side apply of the mirror sets, CatalogSources,
// OperatorHub, CA trust and MachineConfigs the earlier stages wrote into the work dir, then waits
// for every CatalogSource READY and every MachineConfigPool Updated, and verifies the kernel-module
// blacklists through the API and, over SSH, on the nodes.
type Configure struct {
	// ClientOptions tune the Kubernetes client (tests shorten the poll interval).
	ClientOptions []cluster.Option
	// SSHUser and SSHPort override core and 22 for the lsmod check (tests).
	SSHUser string
	SSHPort int
	// Timeout bounds each wait (default 30 minutes).
	Timeout time.Duration
}

// Name implements pipeline.Stage.
func (Configure) Name() string { return NameConfigure }

// Summary implements pipeline.Stage.
func (Configure) Summary() string { return summary(NameConfigure) }

type configureInputs struct {
	// Files are the SHA-256 of every manifest applied, by path relative to the work dir.
	Files        map[string]string   `json:"files"`
	RegistryHost string              `json:"registryHost"`
	CAFiles      map[string]string   `json:"caFiles,omitempty"`
	Disable      bool                `json:"disableDefaultSources"`
	Blacklists   []cluster.Blacklist `json:"blacklists,omitempty"`
}

// configureOptions builds the domain options from the site and work dir.
func configureOptions(env *pipeline.Env) cluster.ConfigureOptions {
	s := env.Site
	var cas []string
	if s.Registry.CAFile != "" {
		cas = append(cas, s.Registry.CAFile)
	}
	cas = append(cas, s.Day1.TrustBundles...)
	bls := s.Day1.ModuleBlacklist
	if bls == nil {
		bls = agentiso.DefaultBlacklist(s)
	}
	var out []cluster.Blacklist
	for _, b := range bls {
		out = append(out, cluster.Blacklist{Modules: b.Modules, Pools: b.Pools})
	}
	return cluster.ConfigureOptions{
		WorkDir: env.WorkDir, RegistryHost: s.Registry.Host, CAFiles: cas,
		DisableDefaultSources: s.Day1.DisableDefaultSources == nil || *s.Day1.DisableDefaultSources,
		Blacklists:            out,
	}
}

// Inputs implements pipeline.Stage.
func (Configure) Inputs(env *pipeline.Env) (any, error) {
	o := configureOptions(env)
	in := configureInputs{Files: map[string]string{}, CAFiles: map[string]string{}, RegistryHost: o.RegistryHost,
		Disable: o.DisableDefaultSources, Blacklists: o.Blacklists}
	files, err := cluster.ManifestFiles(env.WorkDir)
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		h, err := fileSHA256(f)
		if err != nil {
			return nil, err
		}
		rel, _ := filepath.Rel(env.WorkDir, f)
		in.Files[rel] = h
	}
	for _, f := range o.CAFiles {
		h, err := fileSHA256(f)
		if err != nil {
			return nil, fmt.Errorf("CA trust: %w", err)
		}
		in.CAFiles[f] = h
	}
	return in, nil
}

// Kubeconfig is the kubeconfig the install stage writes into the work dir.
func Kubeconfig(workDir string) string { return filepath.Join(workDir, "kubeconfig") }

// KnownHosts is the known_hosts file gather and the blacklist check record node keys in.
func KnownHosts(workDir string) string { return filepath.Join(workDir, "known_hosts") }

// nodeDialer is the SSH dialer for the nodes (user core, the profile's key, host keys recorded in
// the work dir), or nil with the reason when no private key is available.
func nodeDialer(s *site.Site, workDir, user string, port int) (*gather.Dialer, string) {
	if user == "" {
		user = "core" // RHCOS's only login
	}
	key := s.SSHPrivateKeyFile()
	if key == "" {
		return nil, "cluster.sshKeyFile does not end in .pub, so no private key beside it"
	}
	if _, err := os.Stat(key); err != nil {
		return nil, fmt.Sprintf("private key %s: %v", key, err)
	}
	signer, err := gather.LoadSigner(key)
	if err != nil {
		return nil, err.Error()
	}
	return &gather.Dialer{User: user, Signer: signer, Keys: gather.NewHostKeys(KnownHosts(workDir)), Port: port}, ""
}

func stageEvents(env *pipeline.Env, stage string) func(kind pipeline.EventKind, node, msg string) {
	return func(kind pipeline.EventKind, node, msg string) {
		if env.Events != nil {
			env.Events(pipeline.Event{Time: time.Now(), Kind: kind, Stage: stage, Node: node, Message: msg})
		}
	}
}

// Run implements pipeline.Stage.
func (st Configure) Run(ctx context.Context, env *pipeline.Env) (any, error) {
	ev := stageEvents(env, NameConfigure)
	changes := newChangeLog(env)
	c, err := cluster.NewFromKubeconfig(Kubeconfig(env.WorkDir), append(st.ClientOptions[:len(st.ClientOptions):len(st.ClientOptions)], changes.option())...)
	if err != nil {
		return nil, fmt.Errorf("configure: %w (the install stage writes it)", err)
	}
	o := configureOptions(env)
	o.Timeout = st.Timeout
	if d, why := nodeDialer(env.Site, env.WorkDir, st.SSHUser, st.SSHPort); d != nil {
		o.Prober = d
	} else if len(o.Blacklists) > 0 {
		ev(pipeline.Warning, "", "module blacklist is checked through the API only, not on the nodes: "+why)
	}
	res, err := c.Configure(ctx, o, func(m string) { ev(pipeline.Info, "", m) })
	if rerr := changes.done(ev, res.Applied, res.Changed); rerr != nil && err == nil {
		err = rerr
	}
	if err != nil {
		return nil, fmt.Errorf("configure: %w", err)
	}
	return ConfigureOutput{Objects: appliedObjects(res.Applied), CatalogSources: res.CatalogSources, Pools: res.Pools, Blacklist: res.Blacklist}, nil
}

// ConfigureOutput is the journaled output of the configure stage: what it applied and what the
// cluster reported, the same on every run that changes nothing.
type ConfigureOutput struct {
	Objects        []AppliedObject      `json:"objects"`
	CatalogSources []string             `json:"catalogSources,omitempty"`
	Pools          []cluster.PoolStatus `json:"pools,omitempty"`
	Blacklist      []cluster.NodeModule `json:"blacklist,omitempty"`
}

// Verify implements pipeline.Verifier: every object configure applies still exists and no
// MachineConfigPool is Degraded.
func (st Configure) Verify(ctx context.Context, env *pipeline.Env) error {
	c, err := cluster.NewFromKubeconfig(Kubeconfig(env.WorkDir), st.ClientOptions...)
	if err != nil {
		return err
	}
	objs, _, err := cluster.Objects(configureOptions(env))
	if err != nil {
		return err
	}
	var missing []string
	for _, u := range objs {
		if _, err := c.Get(ctx, cluster.RefOf(u)); err != nil {
			missing = append(missing, cluster.RefOf(u).String())
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("configure: no longer in the cluster: %s", strings.Join(missing, ", "))
	}
	pools, err := c.List(ctx, cluster.MachineConfigV1, "MachineConfigPool", "", "")
	if err != nil {
		return err
	}
	for i := range pools {
		if s, _, msg, _ := cluster.Condition(&pools[i], "Degraded"); s == "True" {
			return fmt.Errorf("configure: pool %s is Degraded: %s", pools[i].GetName(), msg)
		}
	}
	return nil
}
