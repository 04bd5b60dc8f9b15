package site

import "github.com/bootstrap-dev/bootstrap/internal/finding"

// APIVersion and Kind identify a site profile document.
const (
	APIVersion = "bootstrap.openshift.io/v1alpha1"
	Kind       = "Site"
)

// Site is one site profile: everything a run needs to take bare metal to a GitOps-managed cluster.
// Paths in it are relative to the profile file's directory until Load resolves them.
//
// A `site:"..."` tag marks a field that names a local path: "file", "dir", "exec" (a program;
// resolved only when it contains a slash) or "secret" (a file that must be private, mode 0600).
// Load resolves those paths and Validate checks them.
type Site struct {
	APIVersion string   `yaml:"apiVersion" json:"apiVersion"`
	Kind       string   `yaml:"kind" json:"kind"`
	Metadata   Metadata `yaml:"metadata" json:"metadata"`
	Cluster    Cluster  `yaml:"cluster" json:"cluster"`
	Registry   Registry `yaml:"registry" json:"registry"`
	Mirror     Mirror   `yaml:"mirror" json:"mirror"`
	ISO        ISO      `yaml:"iso" json:"iso"`
	Nodes      []Node   `yaml:"nodes" json:"nodes"`
	Boot       Boot     `yaml:"boot,omitempty" json:"boot,omitempty"`
	Day1       Day1     `yaml:"day1,omitempty" json:"day1,omitempty"`
	GitOps     GitOps   `yaml:"gitops" json:"gitops"`
	Upgrade    Upgrade  `yaml:"upgrade,omitempty" json:"upgrade,omitempty"`

	// File is the absolute path the profile was loaded from (not part of the document).
	File string `yaml:"-" json:"-"`

	// src is the file name as given to Load, used in problem messages; pos maps field paths
	// ("nodes[2].bmc.address") to where their values are written.
	src string
	pos map[string]finding.Position
}

// Metadata names the site.
type Metadata struct {
	Name        string `yaml:"name" json:"name" max:"253"`
	Description string `yaml:"description,omitempty" json:"description,omitempty"`
}

// Cluster is the OpenShift cluster to install.
type Cluster struct {
	Name       string     `yaml:"name" json:"name" max:"253"`
	BaseDomain string     `yaml:"baseDomain" json:"baseDomain"`
	Release    Release    `yaml:"release" json:"release"`
	Networking Networking `yaml:"networking" json:"networking"`
	// Platform is install-config's platform: baremetal (VIPs managed by the cluster) or none
	// (external load balancer). Default: none for a single control-plane node, else baremetal.
	Platform    string   `yaml:"platform,omitempty" json:"platform,omitempty"`
	APIVIPs     []string `yaml:"apiVIPs,omitempty" json:"apiVIPs,omitempty"`
	IngressVIPs []string `yaml:"ingressVIPs,omitempty" json:"ingressVIPs,omitempty"`
	// RendezvousIP is the static address of the control-plane node that runs the assisted service.
	RendezvousIP string `yaml:"rendezvousIP" json:"rendezvousIP"`
	// NTPSources are host names or addresses the nodes (and preflight) use for time, without a
	// port: chrony on the nodes always uses 123. A loopback address is preflight's only (the
	// lab's responder, which may give a port) and is not passed to the nodes.
	NTPSources []string `yaml:"ntpSources,omitempty" json:"ntpSources,omitempty"`
	// DNSServers, when set, are queried by preflight instead of the jump host's resolver.
	DNSServers []string `yaml:"dnsServers,omitempty" json:"dnsServers,omitempty"`
	// SSHKeyFile is the public key written into install-config; the private key beside it
	// (same path without .pub) is used by gather.
	SSHKeyFile string    `yaml:"sshKeyFile" json:"sshKeyFile" site:"file"`
	Installer  Installer `yaml:"installer,omitempty" json:"installer,omitempty"`
	// Proxy, Capabilities and CPUPartitioningMode are install-config's fields of the same names
	// (see proxy.go).
	Proxy               Proxy        `yaml:"proxy,omitempty" json:"proxy,omitempty"`
	Capabilities        Capabilities `yaml:"capabilities,omitempty" json:"capabilities,omitempty"`
	CPUPartitioningMode string       `yaml:"cpuPartitioningMode,omitempty" json:"cpuPartitioningMode,omitempty"` // None (default) or AllNodes
}

// Release selects the OpenShift release payload.
type Release struct {
	Version string `yaml:"version" json:"version"`
	// Image is the source release image (by tag or digest); the mirror stage resolves it.
	Image        string `yaml:"image,omitempty" json:"image,omitempty" max:"1024"`
	Architecture string `yaml:"architecture,omitempty" json:"architecture,omitempty"` // amd64 (default) or arm64
}

// Networking is install-config's networking section.
type Networking struct {
	NetworkType    string           `yaml:"networkType,omitempty" json:"networkType,omitempty"` // OVNKubernetes
	MachineNetwork []string         `yaml:"machineNetwork" json:"machineNetwork"`
	ClusterNetwork []ClusterNetwork `yaml:"clusterNetwork,omitempty" json:"clusterNetwork,omitempty"`
	ServiceNetwork []string         `yaml:"serviceNetwork,omitempty" json:"serviceNetwork,omitempty"`
}

// ClusterNetwork is one pod network block.
type ClusterNetwork struct {
	CIDR       string `yaml:"cidr" json:"cidr"`
	HostPrefix int    `yaml:"hostPrefix" json:"hostPrefix"`
}

// Installer says where openshift-install comes from and how long to wait for it.
type Installer struct {
	// Path to openshift-install; empty means PATH, then extraction from the mirrored release.
	Path string `yaml:"path,omitempty" json:"path,omitempty" site:"exec"`
	// BootstrapTimeout and InstallTimeout are Go durations ("90m").
	BootstrapTimeout string `yaml:"bootstrapTimeout,omitempty" json:"bootstrapTimeout,omitempty"`
	InstallTimeout   string `yaml:"installTimeout,omitempty" json:"installTimeout,omitempty"`
}

// Registry is the local mirror registry (Quay on site).
type Registry struct {
	Host      string `yaml:"host" json:"host" max:"260"` // host[:port]
	Namespace string `yaml:"namespace,omitempty" json:"namespace,omitempty"`
	CAFile    string `yaml:"caFile,omitempty" json:"caFile,omitempty" site:"file"`
	// AuthFile is a container auth file (auths JSON); it is a secret and only its path is recorded.
	AuthFile string `yaml:"authFile,omitempty" json:"authFile,omitempty" site:"secret"`
	// Insecure skips TLS verification (and allows plain HTTP). Loudly reported.
	Insecure bool `yaml:"insecure,omitempty" json:"insecure,omitempty"`
}

// Mirror is what to copy into the registry and from where.
type Mirror struct {
	// ImageSetConfig is an oc-mirror v2 ImageSetConfiguration file.
	ImageSetConfig string       `yaml:"imageSetConfig" json:"imageSetConfig" site:"file"`
	Source         MirrorSource `yaml:"source,omitempty" json:"source,omitempty"`
	// Platforms to keep from multi-arch indexes ("linux/amd64"), or ["all"] for every platform;
	// default: the cluster's architecture. A filtered index keeps its digest, so the registry
	// receives a sparse index (only the kept platforms' images): Quay needs FEATURE_SPARSE_INDEX,
	// distribution validation.manifests.indexes.platforms: list. A registry that refuses it gets
	// every platform after all (one warning per run); ["all"] copies every platform directly.
	Platforms []string `yaml:"platforms,omitempty" json:"platforms,omitempty"`
	// Parallel is how many blobs and manifests are copied at once (default 12). Transfers are
	// scheduled largest first; the registries' hashing and disk writes, not this tool, are the
	// limit on a small jump host, and 12 keeps both registries busy while a large layer streams.
	// Each transfer streams through a small buffer, so memory stays flat as this grows.
	Parallel int `yaml:"parallel,omitempty" json:"parallel,omitempty"`
	// SignatureStore is the URL the release signatures are fetched from, if any.
	SignatureStore string `yaml:"signatureStore,omitempty" json:"signatureStore,omitempty" max:"2048"`
}

// MirrorSource is either a registry (connected or proxied) or an archive directory (sneakernet).
type MirrorSource struct {
	// Registry overrides the host of every source reference ("host:port"); empty keeps the references as written.
	Registry   string `yaml:"registry,omitempty" json:"registry,omitempty"`
	ArchiveDir string `yaml:"archiveDir,omitempty" json:"archiveDir,omitempty" site:"dir"`
	AuthFile   string `yaml:"authFile,omitempty" json:"authFile,omitempty" site:"secret"`
	CAFile     string `yaml:"caFile,omitempty" json:"caFile,omitempty" site:"file"`
	Insecure   bool   `yaml:"insecure,omitempty" json:"insecure,omitempty"`
}

// ISO is how the agent ISO is built and served.
type ISO struct {
	// ServeAddress is the listen address of the ISO server ("0.0.0.0:8080").
	ServeAddress string `yaml:"serveAddress" json:"serveAddress"`
	// BaseURL is the URL the BMCs fetch from; default http://<serveAddress>.
	BaseURL string `yaml:"baseURL,omitempty" json:"baseURL,omitempty" max:"2048"`
	TLSCert string `yaml:"tlsCert,omitempty" json:"tlsCert,omitempty" site:"file"`
	TLSKey  string `yaml:"tlsKey,omitempty" json:"tlsKey,omitempty" site:"secret"`
	// PerNode builds a per-node ISO view for nodes whose iso section is set.
	PerNode bool `yaml:"perNode,omitempty" json:"perNode,omitempty"`
}

// Boot tunes the boot stage. Every field is optional; the defaults suit iDRAC9 on PowerEdge.
type Boot struct {
	// Parallel is how many nodes are worked on at once (default 0: every node, up to 256). The
	// work is waiting on BMCs, not CPU, so a whole rack boots in about the time of one node. The
	// cap bounds what the jump host holds open: each node in flight keeps two or three
	// connections (Redfish, and its BMC reading the ISO), so 256 stays well under the usual
	// 1024 open files. Lower it only for a slow BMC network. Each node uses at most one Redfish
	// session on its own BMC.
	Parallel int `yaml:"parallel,omitempty" json:"parallel,omitempty"`
	// ConfirmTimeout bounds the wait for a node to show power On with its one-time boot consumed
	// (Go duration; default 10m).
	ConfirmTimeout string `yaml:"confirmTimeout,omitempty" json:"confirmTimeout,omitempty"`
	// ResumeGrace is how long a resumed run watches a node whose power action was journaled as
	// started but not as done before it decides the action never reached the BMC and sends it
	// (Go duration; default 3m: an iDRAC9 warm reset reaches the boot menu within about 2 minutes).
	// Shorter risks power-cycling a node twice; longer only delays the resume.
	ResumeGrace string `yaml:"resumeGrace,omitempty" json:"resumeGrace,omitempty"`
}

// Role of a node.
const (
	RoleMaster = "master"
	RoleWorker = "worker"
)

// Node is one server.
type Node struct {
	// Name is the host's name: a short name (gpu-0) or a fully qualified one
	// (gpu-0.gpu05.ai.example.com), lower case. The host's hostname and its Kubernetes Node name
	// are exactly this name, the FQDN included.
	Name       string      `yaml:"name" json:"name" max:"253"`
	Role       string      `yaml:"role" json:"role"` // master or worker
	BMC        BMC         `yaml:"bmc" json:"bmc"`
	BootMAC    string      `yaml:"bootMAC" json:"bootMAC"`
	Interfaces []Interface `yaml:"interfaces" json:"interfaces"`
	// RootDevice is the root disk's /dev/disk/by-path name (openshift-install rejects by-id names).
	// SATA/AHCI names differ by kernel: -ata-N.0 on RHCOS 4.13+ (RHEL 9), -ata-N before (RHEL 8).
	RootDevice string `yaml:"rootDevice" json:"rootDevice"`
	// NetworkConfig is an nmstate document, passed through to agent-config.
	NetworkConfig map[string]any `yaml:"networkConfig,omitempty" json:"networkConfig,omitempty"`
	// GPU marks accelerator nodes (day-1 module blacklists apply to them by default).
	GPU bool `yaml:"gpu,omitempty" json:"gpu,omitempty"`
	// ISO holds per-node ISO customizations (with iso.perNode).
	ISO NodeISO `yaml:"iso,omitempty" json:"iso,omitempty"`
}

// Interface is a NIC by name and MAC, as agent-config wants it.
type Interface struct {
	Name       string `yaml:"name" json:"name" max:"15"`
	MACAddress string `yaml:"macAddress" json:"macAddress"`
}

// BMC is how to reach a node's baseboard management controller over Redfish.
type BMC struct {
	// Address is the Redfish endpoint ("https://10.0.0.11" or "https://host:port"); on a BMC
	// that manages several systems, the node's own System: "https://host/redfish/v1/Systems/<id>".
	Address string `yaml:"address" json:"address" max:"2048"`
	// Vendor is an optional, checked hint: dell (iDRAC9) or generic. The BMC's implementation is
	// chosen by discovery (its Manufacturer) whatever this says; preflight warns when they differ.
	Vendor   string    `yaml:"vendor,omitempty" json:"vendor,omitempty"`
	Username string    `yaml:"username" json:"username"`
	Password SecretRef `yaml:"password" json:"password"`
	CAFile   string    `yaml:"caFile,omitempty" json:"caFile,omitempty" site:"file"`
	Insecure bool      `yaml:"insecure,omitempty" json:"insecure,omitempty"`
}

// NodeISO customizes one node's view of the agent ISO.
type NodeISO struct {
	KernelArgs   []string `yaml:"kernelArgs,omitempty" json:"kernelArgs,omitempty"`
	IgnitionFile string   `yaml:"ignitionFile,omitempty" json:"ignitionFile,omitempty" site:"file"`
}

// SecretRef points at a secret; exactly one of File or Env is set. The value is never stored.
type SecretRef struct {
	File string `yaml:"file,omitempty" json:"file,omitempty" site:"secret"`
	Env  string `yaml:"env,omitempty" json:"env,omitempty"`
}

// Day1 is configuration applied at install time through extra manifests.
type Day1 struct {
	// TrustBundles are PEM files added to additionalTrustBundle and the cluster's CA trust.
	TrustBundles []string `yaml:"trustBundles,omitempty" json:"trustBundles,omitempty" site:"file"`
	// DisableDefaultSources turns off the default OperatorHub sources (default true).
	DisableDefaultSources *bool `yaml:"disableDefaultSources,omitempty" json:"disableDefaultSources,omitempty"`
	// ModuleBlacklist lists kernel modules to blacklist and where (default: irdma on GPU workers).
	ModuleBlacklist []ModuleBlacklist `yaml:"moduleBlacklist,omitempty" json:"moduleBlacklist,omitempty"`
	// ExtraManifestsDir holds the user's own manifests, copied into openshift/.
	ExtraManifestsDir string `yaml:"extraManifestsDir,omitempty" json:"extraManifestsDir,omitempty" site:"dir"`
}

// ModuleBlacklist keeps kernel modules from loading on the nodes of some pools.
type ModuleBlacklist struct {
	Modules []string `yaml:"modules" json:"modules"`
	// Pools are MachineConfigPool names: "worker", "master".
	Pools  []string `yaml:"pools" json:"pools"`
	Reason string   `yaml:"reason,omitempty" json:"reason,omitempty"`
}

// GitOps is the Argo CD handoff.
type GitOps struct {
	// Channel of openshift-gitops-operator ("latest", "gitops-1.16").
	Channel             string         `yaml:"channel,omitempty" json:"channel,omitempty"`
	InstallPlanApproval string         `yaml:"installPlanApproval,omitempty" json:"installPlanApproval,omitempty"` // Automatic or Manual
	RepoURL             string         `yaml:"repoURL" json:"repoURL" max:"2048"`
	Revision            string         `yaml:"revision,omitempty" json:"revision,omitempty"`
	Path                string         `yaml:"path,omitempty" json:"path,omitempty"`
	Credentials         GitCredentials `yaml:"credentials,omitempty" json:"credentials,omitempty"`
	CAFile              string         `yaml:"caFile,omitempty" json:"caFile,omitempty" site:"file"`
	RootApp             RootApp        `yaml:"rootApp,omitempty" json:"rootApp,omitempty"`
	// ApplicationSets are files with ApplicationSet manifests applied after the root app.
	ApplicationSets []string `yaml:"applicationSets,omitempty" json:"applicationSets,omitempty" site:"file"`
	Timeout         string   `yaml:"timeout,omitempty" json:"timeout,omitempty"`
}

// GitCredentials are HTTPS (username + password/token) or SSH (private key + known_hosts).
type GitCredentials struct {
	Username       string    `yaml:"username,omitempty" json:"username,omitempty"`
	Password       SecretRef `yaml:"password,omitempty" json:"password,omitempty"`
	SSHKeyFile     string    `yaml:"sshKeyFile,omitempty" json:"sshKeyFile,omitempty" site:"secret"`
	KnownHostsFile string    `yaml:"knownHostsFile,omitempty" json:"knownHostsFile,omitempty" site:"file"`
}

// RootApp is the app-of-apps Application.
type RootApp struct {
	Name      string `yaml:"name,omitempty" json:"name,omitempty" max:"253"`
	Namespace string `yaml:"namespace,omitempty" json:"namespace,omitempty"` // openshift-gitops
	Project   string `yaml:"project,omitempty" json:"project,omitempty"`
}

// Upgrade holds the settings of `bootstrap upgrade run` (day 2) that belong to the site. Every
// field is optional; the flag of the same name (--soak, --max-unavailable, --canary,
// --canary-pool) overrides it for one run, and the run's journal says where each value came from.
type Upgrade struct {
	// Soak is how long the updated canary runs, the other pools still paused, before they are
	// unpaused (Go duration; default 30m). 0s unpauses them as soon as the canary is updated.
	Soak string `yaml:"soak,omitempty" json:"soak,omitempty"`
	// MaxUnavailable is how many nodes of each pool unpaused after the soak may update at once, as
	// MachineConfigPool spec.maxUnavailable takes it: a count of at least 1 (2) or a percent of the
	// pool from 1% to 100% (25%, rounded down, at least one node). Default: each pool's own
	// setting (the machine-config operator's default is 1).
	MaxUnavailable string `yaml:"maxUnavailable,omitempty" json:"maxUnavailable,omitempty" max:"16"`
	// Canary is the worker updated first, alone in the canary pool while the other pools wait: a
	// worker of nodes, a GPU worker where the site has them (default: the first worker by name).
	Canary string `yaml:"canary,omitempty" json:"canary,omitempty" max:"253"`
	// CanaryPool is the name of the MachineConfigPool made to hold the canary, removed when the
	// hop closes (default worker-canary).
	CanaryPool string `yaml:"canaryPool,omitempty" json:"canaryPool,omitempty" max:"253"`
}
