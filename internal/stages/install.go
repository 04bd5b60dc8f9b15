package stages

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/agentiso"
	"github.com/bootstrap-dev/bootstrap/internal/bmc"
	"github.com/bootstrap-dev/bootstrap/internal/cluster"
	"github.com/bootstrap-dev/bootstrap/internal/fsroot"
	"github.com/bootstrap-dev/bootstrap/internal/gather"
	"github.com/bootstrap-dev/bootstrap/internal/install"
	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
	"github.com/bootstrap-dev/bootstrap/internal/redirect"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// Install is the install stage: follow `openshift-install agent wait-for` to the end while reading
// the rendezvous host's API for failing host validations, then check the cluster through the
// Kubernetes API. When it fails, logs are gathered (see Gather) and the tarball named in the error.
type Install struct {
	// ClientOptions tune the Kubernetes client; APIPort overrides 8090 and SSHPort 22 (tests).
	ClientOptions []cluster.Option
	APIPort       int
	SSHPort       int
	SSHUser       string
	// ClusterTimeout bounds the Kubernetes checks after the installer (default 30 minutes).
	ClusterTimeout time.Duration
	// NoGather turns off the automatic gather on failure.
	NoGather bool
	// BMCOptions tune the handover of nodes booted with a persistent override (tests).
	BMCOptions []bmc.Option
	// Serve, when set, makes sure the ISO server runs (nodes read their live ISO until they have
	// written their disks): a run resumed in install serves it as the boot stage did. Not called
	// when the ISO is served elsewhere (iso.baseURL).
	Serve func(ctx context.Context, env *pipeline.Env) error
	// HostsGrace bounds the wait for every node to appear on the rendezvous host's API
	// (DefaultHostsGrace when zero); past it the stage stops and names the missing nodes.
	HostsGrace time.Duration
	// FollowInterval is the rendezvous API's poll interval (install.Follower's default when zero).
	FollowInterval time.Duration
}

// unverifiedNodes reads the boot stage's output: the nodes booted without evidence, and why.
func unverifiedNodes(env *pipeline.Env) map[string]string {
	out := map[string]string{}
	if b, ok, _ := BootOutputKey.Read(env); ok {
		for _, n := range b.Nodes {
			if n.Unverified != "" {
				out[n.Node] = n.Unverified
			}
		}
	}
	return out
}

// Name implements pipeline.Stage.
func (Install) Name() string { return NameInstall }

// Summary implements pipeline.Stage.
func (Install) Summary() string { return summary(NameInstall) }

type installInputs struct {
	RendezvousIP string   `json:"rendezvousIP"`
	Nodes        []string `json:"nodes"`
	Installer    string   `json:"installer"`
	Bootstrap    string   `json:"bootstrapTimeout"`
	Install      string   `json:"installTimeout"`
	ISO          string   `json:"isoSHA256,omitempty"`
}

// Inputs implements pipeline.Stage.
func (st Install) Inputs(env *pipeline.Env) (any, error) {
	s := env.Site
	in := installInputs{RendezvousIP: s.Cluster.RendezvousIP, Installer: s.Cluster.Installer.Path,
		Bootstrap: s.Cluster.Installer.BootstrapTimeout, Install: s.Cluster.Installer.InstallTimeout}
	for _, n := range s.Nodes {
		in.Nodes = append(in.Nodes, n.Name)
	}
	if iso, ok, err := ISOOutputKey.Read(env); ok && err == nil && iso.Build != nil {
		in.ISO = iso.Build.SHA256
	}
	return in, nil
}

func duration(field, v string) (time.Duration, error) {
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("%s %q: %w", field, v, err)
	}
	return d, nil
}

// Run implements pipeline.Stage.
func (st Install) Run(ctx context.Context, env *pipeline.Env) (any, error) {
	s := env.Site
	ev := stageEvents(env, NameInstall)
	bt, err := duration("cluster.installer.bootstrapTimeout", s.Cluster.Installer.BootstrapTimeout)
	if err != nil {
		return nil, err
	}
	it, err := duration("cluster.installer.installTimeout", s.Cluster.Installer.InstallTimeout)
	if err != nil {
		return nil, err
	}
	bin := s.Cluster.Installer.Path
	if iso, ok, _ := ISOOutputKey.Read(env); ok && iso.Build != nil && iso.Build.InstallerPath != "" && bin == "" {
		bin = iso.Build.InstallerPath
	}
	if bin == "" {
		if bin, err = agentiso.FindInstaller(""); err != nil {
			return nil, err
		}
	}
	assets := filepath.Join(env.WorkDir, agentiso.InstallerDir)
	token, err := install.WatcherToken(assets)
	if err != nil {
		return nil, err
	}
	port := st.APIPort
	if port == 0 {
		port = 8090
	}
	o := install.Options{
		Installer: bin, AssetDir: assets, WorkDir: env.WorkDir, BootstrapTimeout: bt, InstallTimeout: it,
		Follower: &install.Follower{BaseURL: "http://" + net.JoinHostPort(s.Cluster.RendezvousIP, fmt.Sprint(port)),
			WatcherToken: token, Client: &http.Client{Timeout: 20 * time.Second, CheckRedirect: redirect.SameOrigin}, Interval: st.FollowInterval},
		ClusterTimeout: st.ClusterTimeout, ClientOptions: st.ClientOptions,
	}
	for _, n := range s.Nodes {
		o.Nodes = append(o.Nodes, n.Name)
	}
	if st.Serve != nil && agentiso.ServedHere(s.ISO.ServeAddress, s.ISO.BaseURL) {
		if err := st.Serve(ctx, env); err != nil {
			// Nodes past their disk write need no ISO; one still in its live system does.
			ev(pipeline.Warning, "", "cannot serve the agent ISO ("+err.Error()+"): a node still running its live ISO may fail; serve it with `bootstrap serve`")
		}
	}
	ho, err := newHandover(env, st.BMCOptions)
	if err != nil {
		return nil, err
	}
	// The phase bar: the install's phase and its nodes' states, sent whenever either changes.
	tr := install.NewTracker(o.Nodes)
	showPhase := func() {
		if env.Events == nil {
			return
		}
		s := tr.Snapshot()
		env.Events(pipeline.Event{Time: time.Now(), Kind: pipeline.Progress, Stage: NameInstall, Step: s.Name,
			Current: int64(s.Phase), Total: int64(s.Phases), Unit: pipeline.UnitPhases,
			Done: int64(s.NodesDone), DoneTotal: int64(s.Nodes), Message: s.States})
	}
	showPhase()
	// Nodes the rendezvous host has not seen within the grace stop the install early, named.
	grace := st.HostsGrace
	if grace <= 0 {
		grace = DefaultHostsGrace
	}
	watch := newHostsWatch(o.Nodes)
	ictx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go watch.run(ictx, grace, unverifiedNodes(env), cancel)
	res, err := install.Run(ictx, o, install.Callbacks{
		Line: func(target, l string) {
			if env.Events != nil {
				env.Events(pipeline.Event{Time: time.Now(), Kind: pipeline.Info, Stage: NameInstall, Step: target, Message: l})
			}
		},
		Finding: func(f install.Finding) {
			if f.Host != "" {
				watch.saw(f.Host)
			}
			if f.Kind == install.HostStage {
				ho.OnHostStage(ctx, f.Host, f.Status)
			}
			kind := pipeline.Info
			if f.Kind == install.ValidationFailing {
				kind = pipeline.Warning
			}
			ev(kind, f.Host, f.String())
			if tr.Finding(f) {
				showPhase()
			}
		},
		Progress: func(m string) { ev(pipeline.Info, "", m) },
		Reached: func(target string) {
			watch.stop()
			if tr.Reached(target) {
				showPhase()
			}
		},
	})
	if err == nil {
		if herr := ho.Finish(ctx); herr != nil {
			return nil, fmt.Errorf("install: the cluster is installed, but a node booted with a persistent override still has it (it would boot the ISO again on its next reboot); fix the BMC and run again: %w", herr)
		}
		return res, nil
	}
	var missing *HostsMissingError
	if errors.As(context.Cause(ictx), &missing) && ctx.Err() == nil {
		// No gather: the missing nodes are not up to be read, and their BMCs' logs are the
		// remedy's first step.
		return nil, fmt.Errorf("install: %w", missing)
	}
	msg := err.Error()
	if len(res.Failing) > 0 {
		var fs []string
		for _, f := range res.Failing {
			fs = append(fs, f.String())
		}
		msg += "; failing validations: " + strings.Join(fs, "; ")
	}
	if !st.NoGather {
		// The install has failed already: gather on a context that survives its cancellation.
		out := filepath.Join(env.WorkDir, "gather-"+time.Now().UTC().Format("20060102T150405Z")+".tar.gz")
		idx, gerr := Gather(context.WithoutCancel(ctx), s, env.WorkDir, out, GatherOptions{SSHPort: st.SSHPort, SSHUser: st.SSHUser, Scrub: env.Scrub})
		if gerr != nil {
			msg += "; gather failed: " + gerr.Error()
		} else {
			msg += fmt.Sprintf("; logs gathered into %s (%d sources, %d failed)", out, len(idx.Entries), idx.Failed)
		}
	}
	return nil, fmt.Errorf("install: %s: %w", msg, err)
}

// Verify implements pipeline.Verifier: the kubeconfig is there and the ClusterVersion Available.
func (st Install) Verify(ctx context.Context, env *pipeline.Env) error {
	c, err := cluster.NewFromKubeconfig(Kubeconfig(env.WorkDir), st.ClientOptions...)
	if err != nil {
		return err
	}
	u, err := c.Get(ctx, cluster.Ref{APIVersion: cluster.ConfigV1, Kind: "ClusterVersion", Name: "version"})
	if err != nil {
		return err
	}
	if state, msg := cluster.ClusterVersionAvailable(u); state != cluster.Done {
		return fmt.Errorf("install: ClusterVersion: %s", msg)
	}
	return nil
}

// GatherOptions tune Gather.
type GatherOptions struct {
	// SSHPort and SSHUser override 22 and core (tests); Progress is told each finished source.
	SSHPort  int
	SSHUser  string
	Progress func(gather.Entry)
	// NoBMC skips the Redfish system event logs.
	NoBMC bool
	// Scrub removes secrets from everything written into the tarball (gather.Options.Scrub).
	Scrub func([]byte) []byte
}

// Gather collects the nodes' journals and agent-gather over SSH, each BMC's SEL over Redfish and
// the bootstrap journal into the tarball out. Sources that fail are listed in its index.
func Gather(ctx context.Context, s *site.Site, workDir, out string, o GatherOptions) (gather.Index, error) {
	var sources []gather.Source
	d, why := nodeDialer(s, workDir, o.SSHUser, o.SSHPort)
	var nodes []gather.Node
	for _, n := range s.Nodes {
		addr := NodeAddress(n)
		if addr == "" && len(s.Nodes) == 1 {
			addr = s.Cluster.RendezvousIP
		}
		nodes = append(nodes, gather.Node{Name: n.Name, Address: addr})
	}
	if d != nil {
		sources = gather.NodeSources(d, nodes, gather.DefaultCommands())
		defer gather.Close(sources)
	} else {
		sources = append(sources, failed{name: "nodes/ssh", err: "no SSH to the nodes: " + why})
	}
	if !o.NoBMC {
		for _, n := range s.Nodes {
			sources = append(sources, bmcSEL(n))
		}
	}
	sources = append(sources, gather.File{Path: filepath.Join(workDir, pipeline.JournalFile), As: "bootstrap/journal.jsonl"})
	return gather.Gather(ctx, out, sources, gather.Options{Progress: o.Progress, Scrub: o.Scrub})
}

// bmcSEL is the Redfish SEL source of a node, with its password read now; a password that cannot
// be read becomes a failed source.
func bmcSEL(n site.Node) gather.Source {
	name := "bmc/" + n.Name + "/sel.json"
	pw, err := site.ReadSecret(n.BMC.Password)
	if err != nil {
		return failed{name: name, err: err.Error()}
	}
	tr := &tls.Config{MinVersion: tls.VersionTLS12}
	if n.BMC.CAFile != "" {
		pem, err := fsroot.ReadFile(n.BMC.CAFile, fsroot.PEM)
		if err != nil {
			return failed{name: name, err: err.Error()}
		}
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(pem)
		tr.RootCAs = pool
	}
	tr.InsecureSkipVerify = n.BMC.Insecure // bmc.insecure: reported loudly by preflight and boot
	client := &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{TLSClientConfig: tr}, CheckRedirect: redirect.SameOrigin}
	return gather.RedfishSEL{Node: n.Name, Endpoint: n.BMC.Address, Username: n.BMC.Username, Password: string(pw), Client: client}
}

type failed struct{ name, err string }

func (f failed) Name() string { return f.name }

func (f failed) Collect(context.Context, io.Writer) error {
	return fmt.Errorf("%s", f.err)
}

// NodeAddress is the first static address in a node's nmstate networkConfig
// (interfaces[].ipv4|ipv6.address[].ip), or "".
func NodeAddress(n site.Node) string {
	ifs, _ := n.NetworkConfig["interfaces"].([]any)
	for _, i := range ifs {
		m, _ := i.(map[string]any)
		for _, fam := range []string{"ipv4", "ipv6"} {
			f, _ := m[fam].(map[string]any)
			addrs, _ := f["address"].([]any)
			for _, a := range addrs {
				am, _ := a.(map[string]any)
				if ip, _ := am["ip"].(string); ip != "" {
					return ip
				}
			}
		}
	}
	return ""
}
