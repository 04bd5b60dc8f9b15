package agentiso

// The structs below are small, faithful subsets of the installer's own types
// (github.com/openshift/installer pkg/types.InstallConfig and pkg/types/agent.Config). Field names
// and YAML keys follow the installer exactly; the installercheck test module decodes our output
// strictly into the installer's types so a field the installer does not know fails there.

// InstallConfig is install-config.yaml (apiVersion v1).
type InstallConfig struct {
	APIVersion                  string              `yaml:"apiVersion"`
	BaseDomain                  string              `yaml:"baseDomain"`
	Metadata                    ObjectMeta          `yaml:"metadata"`
	Networking                  ICNetworking        `yaml:"networking"`
	ControlPlane                MachinePool         `yaml:"controlPlane"`
	Compute                     []MachinePool       `yaml:"compute"`
	Platform                    Platform            `yaml:"platform"`
	PullSecret                  string              `yaml:"pullSecret"`
	SSHKey                      string              `yaml:"sshKey,omitempty"`
	AdditionalTrustBundle       string              `yaml:"additionalTrustBundle,omitempty"`
	AdditionalTrustBundlePolicy string              `yaml:"additionalTrustBundlePolicy,omitempty"`
	ImageDigestSources          []ImageDigestSource `yaml:"imageDigestSources,omitempty"`
	Proxy                       *ICProxy            `yaml:"proxy,omitempty"`
	Capabilities                *ICCapabilities     `yaml:"capabilities,omitempty"`
	CPUPartitioningMode         string              `yaml:"cpuPartitioningMode,omitempty"`
}

// ICProxy is install-config's proxy; noProxy is one comma-separated string.
type ICProxy struct {
	HTTPProxy  string `yaml:"httpProxy,omitempty"`
	HTTPSProxy string `yaml:"httpsProxy,omitempty"`
	NoProxy    string `yaml:"noProxy,omitempty"`
}

// ICCapabilities is install-config's capabilities.
type ICCapabilities struct {
	BaselineCapabilitySet         string   `yaml:"baselineCapabilitySet,omitempty"`
	AdditionalEnabledCapabilities []string `yaml:"additionalEnabledCapabilities,omitempty"`
}

// ObjectMeta is the part of Kubernetes object metadata the configs use.
type ObjectMeta struct {
	Name string `yaml:"name"`
}

// ICNetworking is install-config's networking section.
type ICNetworking struct {
	NetworkType    string             `yaml:"networkType"`
	ClusterNetwork []ICClusterNetwork `yaml:"clusterNetwork"`
	MachineNetwork []CIDREntry        `yaml:"machineNetwork"`
	ServiceNetwork []string           `yaml:"serviceNetwork"`
}

// ICClusterNetwork is one pod network block.
type ICClusterNetwork struct {
	CIDR       string `yaml:"cidr"`
	HostPrefix int    `yaml:"hostPrefix"`
}

// CIDREntry is a machineNetwork entry.
type CIDREntry struct {
	CIDR string `yaml:"cidr"`
}

// MachinePool is controlPlane or one compute pool.
type MachinePool struct {
	Name           string `yaml:"name"`
	Replicas       int    `yaml:"replicas"`
	Architecture   string `yaml:"architecture"`
	Hyperthreading string `yaml:"hyperthreading"`
}

// Platform is baremetal (with VIPs) or none (single node, or user-managed load balancing).
type Platform struct {
	Baremetal *BaremetalPlatform `yaml:"baremetal,omitempty"`
	None      *struct{}          `yaml:"none,omitempty"`
}

// BaremetalPlatform holds the VIPs; with the agent installer the hosts live in agent-config.
type BaremetalPlatform struct {
	APIVIPs     []string `yaml:"apiVIPs"`
	IngressVIPs []string `yaml:"ingressVIPs"`
}

// ImageDigestSource maps a source repository to its mirrors (install-config imageDigestSources).
type ImageDigestSource struct {
	Source  string   `yaml:"source"`
	Mirrors []string `yaml:"mirrors"`
}

// AgentConfig is agent-config.yaml (apiVersion v1beta1, kind AgentConfig).
type AgentConfig struct {
	APIVersion           string      `yaml:"apiVersion"`
	Kind                 string      `yaml:"kind"`
	Metadata             ObjectMeta  `yaml:"metadata"`
	RendezvousIP         string      `yaml:"rendezvousIP,omitempty"`
	AdditionalNTPSources []string    `yaml:"additionalNTPSources,omitempty"`
	Hosts                []AgentHost `yaml:"hosts"`
}

// AgentHost is one host of agent-config; the agent matches a booted machine to it by MAC.
type AgentHost struct {
	Hostname        string          `yaml:"hostname"`
	Role            string          `yaml:"role"`
	Interfaces      []HostInterface `yaml:"interfaces"`
	RootDeviceHints RootDeviceHints `yaml:"rootDeviceHints"`
	NetworkConfig   map[string]any  `yaml:"networkConfig,omitempty"`
}

// HostInterface names a NIC and its MAC.
type HostInterface struct {
	Name       string `yaml:"name"`
	MACAddress string `yaml:"macAddress"`
}

// RootDeviceHints selects the installation disk; we only ever set a stable device name.
type RootDeviceHints struct {
	DeviceName string `yaml:"deviceName"`
}
