package harness

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/bootstrap-dev/bootstrap/internal/bmc/bmctest"
	"github.com/bootstrap-dev/bootstrap/internal/cluster/clustertest"
	"github.com/bootstrap-dev/bootstrap/internal/handoff/argocdtest"
	"github.com/bootstrap-dev/bootstrap/internal/install/installtest"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// ClusterDir is the lab subdirectory where the cluster player leaves the kubeconfig and the
// wait-for markers the openshift-install test double watches.
const ClusterDir = "cluster"

// Cluster plays the OpenShift cluster the nodes would form. At Start it serves the rendezvous
// host's assisted-service API (installtest, relayed to <rendezvousIP>:8090). Once every
// simulated BMC reports a boot from the inserted ISO, it starts a real kube-apiserver and etcd
// with the OpenShift, OLM and Argo CD CRDs (envtest, 127.0.0.1 on a free port: the API VIP stays
// free, so preflight's VIP check keeps its meaning) and runs the player (player.go), which
// moves the install, MachineConfigPools, catalogs, operators and applications through their
// states.
type Cluster struct {
	// BMCs are the simulators whose boots start the cluster.
	BMCs *BMCs
	// Git, when set, gives the revision Applications sync to.
	Git *Git
	// Poll is the player's period (default 300 ms).
	Poll time.Duration

	dir    string
	api    *installtest.Server
	fwd    *forwarder
	cancel context.CancelFunc
	done   chan struct{}
	nodes  []site.Node

	siteFile string
	labDir   string

	argoWG sync.WaitGroup

	mu       sync.Mutex
	argo     *argocdtest.Instance
	argoErr  error // the last start's failure
	argoTry  int   // starts begun
	starting bool
	env      *envtest.Environment
	err      error
	joins    map[string]*bmctest.BMC // nodes added to the profile after Up, by name
	joined   map[string]bool
}

// Join tells the player about a node added to the lab's profile after Up (a test's extra
// worker) and the simulator of its BMC: once that BMC booted the ISO the node joins the cluster
// with the address the profile gives it.
func (c *Cluster) Join(name string, sim *bmctest.BMC) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.joins == nil {
		c.joins = map[string]*bmctest.BMC{}
	}
	c.joins[name] = sim
}

// Name implements Component.
func (*Cluster) Name() string { return "cluster" }

// Start implements Component.
func (c *Cluster) Start(ctx context.Context, l *Lab) error {
	if m := clustertest.Missing(); m != "" {
		return fmt.Errorf("cluster player: %s", m)
	}
	if c.BMCs == nil {
		return errors.New("cluster player: no BMC simulators to watch")
	}
	if c.Poll == 0 {
		c.Poll = 300 * time.Millisecond
	}
	c.dir = filepath.Join(l.Dir, ClusterDir)
	// A new lab starts a new cluster: the markers of the last one must not satisfy wait-for.
	if err := os.RemoveAll(c.dir); err != nil {
		return err
	}
	if err := os.MkdirAll(c.dir, 0o700); err != nil {
		return err
	}
	c.api = installtest.New("")
	c.api.SetCluster("insufficient", "Waiting for hosts to boot the agent ISO")
	u, err := url.Parse(c.api.URL)
	if err != nil {
		c.api.Close()
		return err
	}
	addr := net.JoinHostPort(l.IP(21).String(), "8090")
	if c.fwd, err = startForwarder(addr, u.Host); err != nil {
		c.api.Close()
		return fmt.Errorf("rendezvous API on %s: %w", addr, err)
	}
	c.nodes = append([]site.Node(nil), l.Site.Nodes...)
	c.siteFile, c.labDir = l.SiteFile, l.Dir
	pctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	c.cancel, c.done = cancel, make(chan struct{})
	go func() {
		defer close(c.done)
		if err := c.play(pctx); err != nil && pctx.Err() == nil {
			c.mu.Lock()
			c.err = err
			c.mu.Unlock()
			// openshift-install (the test double) ends with this instead of waiting forever.
			_ = c.mark("failed", err.Error())
			fmt.Fprintf(os.Stderr, "lab cluster player: %v\n", err)
		}
	}()
	return nil
}

// Configure implements Component.
func (c *Cluster) Configure(*site.Site, *Lab) error { return nil }

// Stop implements Component.
func (c *Cluster) Stop(context.Context) error {
	if c.cancel != nil {
		c.cancel()
		<-c.done
	}
	c.argoWG.Wait()
	var errs []error
	c.mu.Lock()
	errs = append(errs, c.argo.Stop())
	c.argo = nil
	c.mu.Unlock()
	if c.fwd != nil {
		if err := c.fwd.Close(context.Background()); err != nil && !errors.Is(err, net.ErrClosed) {
			errs = append(errs, err)
		}
	}
	if c.api != nil {
		c.api.Close()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.env != nil {
		errs = append(errs, c.env.Stop())
		c.env = nil
	}
	return errors.Join(errs...)
}

// Err is the player's failure, if it stopped on one.
func (c *Cluster) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Describe implements Describer.
func (c *Cluster) Describe() string {
	return "cluster   kube-apiserver+etcd with the CRDs (starts once every node booted the ISO) and the player; rendezvous API " + c.fwd.Addr()
}

// bootedFromISO reports whether a BMC's last boot came from inserted media.
func bootedFromISO(sim *bmctest.BMC) bool {
	st := sim.Stats()
	return st.Boots > 0 && st.BootedFrom != "" && st.BootedFrom != "disk" && strings.Contains(st.BootedFrom, "/")
}

// joining returns the nodes given to Join whose BMC booted the ISO and that have not joined yet,
// as the lab's profile describes them now.
func (c *Cluster) joining() ([]site.Node, error) {
	c.mu.Lock()
	var names []string
	for n, sim := range c.joins {
		if !c.joined[n] && bootedFromISO(sim) {
			names = append(names, n)
		}
	}
	c.mu.Unlock()
	if len(names) == 0 {
		return nil, nil
	}
	s, err := site.Load(c.siteFile)
	if err != nil {
		return nil, err
	}
	var out []site.Node
	for _, n := range s.Nodes {
		if slices.Contains(names, n.Name) {
			out = append(out, n)
		}
	}
	return out, nil
}

func (c *Cluster) setJoined(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.joined == nil {
		c.joined = map[string]bool{}
	}
	c.joined[name] = true
}

// booted reports whether every BMC says its last boot came from inserted media, and how many did.
func (c *Cluster) booted() (int, bool) {
	n := 0
	for _, nd := range c.nodes {
		sim := c.BMCs.Sims[nd.Name]
		if sim == nil {
			continue
		}
		if bootedFromISO(sim) {
			n++
		}
	}
	return n, n == len(c.nodes)
}

// startAPI starts kube-apiserver and etcd with the CRDs and writes the kubeconfig.
func (c *Cluster) startAPI() (dynamic.Interface, error) {
	ctrllog.SetLogger(logr.Discard())
	env := &envtest.Environment{
		BinaryAssetsDirectory:    clustertest.Dir(),
		CRDDirectoryPaths:        []string{filepath.Join(clustertest.Dir(), "crds")},
		ErrorIfCRDPathMissing:    true,
		ControlPlaneStartTimeout: 120 * time.Second,
		ControlPlaneStopTimeout:  30 * time.Second,
		CRDInstallOptions:        envtest.CRDInstallOptions{MaxTime: 120 * time.Second},
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("kube-apiserver: %w", err)
	}
	c.mu.Lock()
	c.env = env
	c.mu.Unlock()
	if err := os.WriteFile(filepath.Join(c.dir, "kubeconfig"), env.KubeConfig, 0o600); err != nil {
		return nil, err
	}
	return dynamic.NewForConfig(cfg)
}

// startArgo starts Argo CD's own controllers against the API server in the background (the
// application-controller takes a while to list the API server's resources) and reports whether
// they run. A start that fails is begun again at the next call, as the GitOps operator
// reconciles its instance again, up to argoStarts times; then the last failure is the answer.
// Their logs are in <lab>/argocd/logs.
func (c *Cluster) startArgo(ctx context.Context, d dynamic.Interface) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.argo != nil:
		return true, nil
	case c.starting:
		return false, nil
	case c.argoTry >= argoStarts:
		return false, fmt.Errorf("the GitOps operator's Argo CD: %d starts failed, the last: %w", c.argoTry, c.argoErr)
	}
	c.argoTry++
	c.starting = true
	c.argoWG.Add(1)
	go func() {
		defer c.argoWG.Done()
		a, err := argocdtest.Start(ctx, d, argocdtest.Options{Dir: filepath.Join(c.labDir, "argocd"),
			Kubeconfig: filepath.Join(c.dir, "kubeconfig"), Namespace: argoNamespace})
		c.mu.Lock()
		defer c.mu.Unlock()
		c.argo, c.argoErr, c.starting = a, err, false
	}()
	return false, nil
}

// argoStarts is how many times the lab starts Argo CD before it gives up.
const argoStarts = 3

// ArgoRestarts describes each restart of an Argo CD process that exited while the lab ran (the
// lab restarts them as a kubelet restarts a crashed container); empty when none did.
func (c *Cluster) ArgoRestarts() []string {
	c.mu.Lock()
	a := c.argo
	c.mu.Unlock()
	if a == nil {
		return nil
	}
	return a.Restarts()
}

// mark writes a wait-for marker with the message the installer double prints.
func (c *Cluster) mark(target, msg string) error {
	return os.WriteFile(filepath.Join(c.dir, target), []byte(msg), 0o644)
}
