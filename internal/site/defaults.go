package site

import (
	"net"
	"net/netip"
)

// Default values. They are written down once here; the schema's "default" annotations come
// from Defaults() too.
const (
	defaultNetworkType        = "OVNKubernetes"
	defaultClusterNetworkCIDR = "10.128.0.0/14"
	defaultClusterHostPrefix  = 23
	defaultServiceNetwork     = "172.30.0.0/16"
	// The IPv6 defaults, used when the machine network is IPv6 (IPv6 only, or dual-stack
	// alongside the IPv4 ones in the machine network's order); the installer requires hostPrefix
	// 64 for IPv6.
	defaultClusterNetworkCIDRv6 = "fd01::/48"
	defaultClusterHostPrefixV6  = 64
	defaultServiceNetworkV6     = "fd02::/112"
	defaultArchitecture         = "amd64"
	defaultGitOpsChannel        = "latest"
	defaultInstallPlanApproval  = "Automatic"
	defaultGitRevision          = "HEAD"
	defaultGitPath              = "."
	defaultRootAppName          = "root"
	defaultGitOpsNamespace      = "openshift-gitops"
	defaultArgoProject          = "default"
	defaultGitOpsTimeout        = "20m"
	// Bare-metal installs are slow to bootstrap: an XE7740 with 8 GPUs spends 10+ minutes in POST
	// on each of its reboots, so the timeouts are generous.
	defaultBootstrapTimeout = "90m"
	defaultInstallTimeout   = "180m"
	defaultMirrorParallel   = 12 // = mirror.DefaultParallel; see Mirror.Parallel
	// defaultBootParallel 0 boots every node at once (bmc.MaxConcurrency at most, see
	// Boot.Parallel); defaultBootConfirmTimeout bounds the wait for
	// power On with the one-time boot consumed; defaultBootResumeGrace is how long a resumed run
	// watches a node whose power action may have been sent (an iDRAC9 warm reset reaches the boot
	// menu within about 2 minutes).
	defaultBootParallel       = 0
	defaultBootConfirmTimeout = "10m"
	defaultBootResumeGrace    = "3m"
	PlatformBaremetal         = "baremetal"
	PlatformNone              = "none"
	// defaultGPUBlacklistModule is blacklisted on GPU nodes: irdma (Intel E810 RDMA) loads on
	// Dell's E810 LOMs and conflicts with the RDMA stack the NVIDIA network/GPU operators set up.
	defaultGPUBlacklistModule = "irdma"
	// DefaultUpgradeSoak is how long `upgrade run` lets the updated canary run before it
	// unpauses the other pools (Upgrade.Soak): long enough for a GPU node's driver pods to be
	// rebuilt for the new OS and to run real work. DefaultCanaryPool names the pool holding the
	// canary (Upgrade.CanaryPool).
	DefaultUpgradeSoak = "30m"
	DefaultCanaryPool  = "worker-canary"
)

// Defaults returns a Site holding only the values that do not depend on the rest of the profile.
func Defaults() Site {
	t := true
	return Site{
		APIVersion: APIVersion,
		Kind:       Kind,
		Cluster: Cluster{
			Release: Release{Architecture: defaultArchitecture},
			Networking: Networking{
				NetworkType:    defaultNetworkType,
				ClusterNetwork: []ClusterNetwork{{CIDR: defaultClusterNetworkCIDR, HostPrefix: defaultClusterHostPrefix}},
				ServiceNetwork: []string{defaultServiceNetwork},
			},
			Installer: Installer{BootstrapTimeout: defaultBootstrapTimeout, InstallTimeout: defaultInstallTimeout},
		},
		Mirror: Mirror{Parallel: defaultMirrorParallel},
		Boot:   Boot{Parallel: defaultBootParallel, ConfirmTimeout: defaultBootConfirmTimeout, ResumeGrace: defaultBootResumeGrace},
		Day1:   Day1{DisableDefaultSources: &t},
		GitOps: GitOps{
			Channel:             defaultGitOpsChannel,
			InstallPlanApproval: defaultInstallPlanApproval,
			Revision:            defaultGitRevision,
			Path:                defaultGitPath,
			RootApp:             RootApp{Name: defaultRootAppName, Namespace: defaultGitOpsNamespace, Project: defaultArgoProject},
			Timeout:             defaultGitOpsTimeout,
		},
		Upgrade: Upgrade{Soak: DefaultUpgradeSoak, CanaryPool: DefaultCanaryPool},
	}
}

// SetDefaults fills every empty field that has a default, including those derived from the
// rest of the profile: the platform from the control-plane count, mirror platforms from the
// architecture, the ISO base URL from the serve address, the irdma blacklist from GPU nodes.
// Fields already set are never changed; calling it twice changes nothing the second time.
func (s *Site) SetDefaults() {
	d := Defaults()
	setStr(&s.APIVersion, d.APIVersion)
	setStr(&s.Kind, d.Kind)
	c := &s.Cluster
	setStr(&c.Release.Architecture, d.Cluster.Release.Architecture)
	setStr(&c.Networking.NetworkType, d.Cluster.Networking.NetworkType)
	if c.Networking.ClusterNetwork == nil || c.Networking.ServiceNetwork == nil {
		var cluster []ClusterNetwork
		var service []string
		for _, fam := range machineFamilies(c.Networking.MachineNetwork) {
			if fam == 6 {
				cluster = append(cluster, ClusterNetwork{CIDR: defaultClusterNetworkCIDRv6, HostPrefix: defaultClusterHostPrefixV6})
				service = append(service, defaultServiceNetworkV6)
			} else {
				cluster = append(cluster, d.Cluster.Networking.ClusterNetwork...)
				service = append(service, d.Cluster.Networking.ServiceNetwork...)
			}
		}
		if c.Networking.ClusterNetwork == nil {
			c.Networking.ClusterNetwork = cluster
		}
		if c.Networking.ServiceNetwork == nil {
			c.Networking.ServiceNetwork = service
		}
	}
	setStr(&c.Installer.BootstrapTimeout, d.Cluster.Installer.BootstrapTimeout)
	setStr(&c.Installer.InstallTimeout, d.Cluster.Installer.InstallTimeout)
	if c.Platform == "" && len(s.Nodes) > 0 {
		c.Platform = PlatformBaremetal
		if s.ControlPlaneCount() == 1 {
			c.Platform = PlatformNone
		}
	}

	if s.Mirror.Platforms == nil {
		s.Mirror.Platforms = []string{"linux/" + c.Release.Architecture}
	}
	if s.Mirror.Parallel == 0 {
		s.Mirror.Parallel = d.Mirror.Parallel
	}
	if s.ISO.BaseURL == "" {
		s.ISO.BaseURL = baseURLFor(s.ISO.ServeAddress, s.ISO.TLSCert != "")
	}
	if s.Boot.Parallel == 0 {
		s.Boot.Parallel = d.Boot.Parallel
	}
	setStr(&s.Boot.ConfirmTimeout, d.Boot.ConfirmTimeout)
	setStr(&s.Boot.ResumeGrace, d.Boot.ResumeGrace)

	if s.Day1.DisableDefaultSources == nil {
		t := true
		s.Day1.DisableDefaultSources = &t
	}
	if s.Day1.ModuleBlacklist == nil {
		if pools := gpuPools(s.Nodes); len(pools) > 0 {
			s.Day1.ModuleBlacklist = []ModuleBlacklist{{
				Modules: []string{defaultGPUBlacklistModule},
				Pools:   pools,
				Reason:  "default on GPU nodes: the Intel E810 RDMA driver conflicts with the NVIDIA RDMA stack",
			}}
		}
	}

	g, dg := &s.GitOps, d.GitOps
	setStr(&g.Channel, dg.Channel)
	setStr(&g.InstallPlanApproval, dg.InstallPlanApproval)
	setStr(&g.Revision, dg.Revision)
	setStr(&g.Path, dg.Path)
	setStr(&g.RootApp.Name, dg.RootApp.Name)
	setStr(&g.RootApp.Namespace, dg.RootApp.Namespace)
	setStr(&g.RootApp.Project, dg.RootApp.Project)
	setStr(&g.Timeout, dg.Timeout)
	setStr(&s.Upgrade.Soak, d.Upgrade.Soak)
	setStr(&s.Upgrade.CanaryPool, d.Upgrade.CanaryPool)
}

// machineFamilies returns the address families (4, 6) of the machine networks in the order they
// first appear; [4] when there is none to go by.
func machineFamilies(cidrs []string) []int {
	var out []int
	for _, m := range cidrs {
		p, err := netip.ParsePrefix(m)
		if err != nil {
			continue
		}
		fam := 4
		if p.Addr().Is6() {
			fam = 6
		}
		if len(out) == 0 || (len(out) == 1 && out[0] != fam) {
			out = append(out, fam)
		}
	}
	if len(out) == 0 {
		out = []int{4}
	}
	return out
}

func setStr(p *string, v string) {
	if *p == "" {
		*p = v
	}
}

// gpuPools returns the MachineConfigPools holding GPU nodes, worker before master.
func gpuPools(nodes []Node) []string {
	var worker, master bool
	for _, n := range nodes {
		if n.GPU {
			worker = worker || n.Role == RoleWorker
			master = master || n.Role == RoleMaster
		}
	}
	var pools []string
	if worker {
		pools = append(pools, RoleWorker)
	}
	if master {
		pools = append(pools, RoleMaster)
	}
	return pools
}

// baseURLFor derives the URL BMCs fetch the ISO from. A wildcard listen address (0.0.0.0, ::,
// empty host) says nothing about which address BMCs can reach, so no URL is derived and
// Validate asks for iso.baseURL.
func baseURLFor(serve string, tls bool) string {
	host, port, err := net.SplitHostPort(serve)
	if err != nil || host == "" {
		return ""
	}
	if ip, err := netip.ParseAddr(host); err == nil && ip.IsUnspecified() {
		return ""
	}
	scheme := "http"
	if tls {
		scheme = "https"
	}
	return scheme + "://" + net.JoinHostPort(host, port)
}

// ControlPlaneCount returns the number of nodes with role master.
func (s *Site) ControlPlaneCount() int {
	n := 0
	for _, node := range s.Nodes {
		if node.Role == RoleMaster {
			n++
		}
	}
	return n
}

// WorkerCount returns the number of nodes with role worker.
func (s *Site) WorkerCount() int {
	n := 0
	for _, node := range s.Nodes {
		if node.Role == RoleWorker {
			n++
		}
	}
	return n
}
