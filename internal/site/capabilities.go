package site

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Capabilities selects the optional cluster components, install-config's capabilities section.
// A GPU or telco site often starts from a small baseline ("None") and adds what it uses.
type Capabilities struct {
	// BaselineCapabilitySet is None, v4.11 ... v4.18 or vCurrent (the default when unset).
	BaselineCapabilitySet string `yaml:"baselineCapabilitySet,omitempty" json:"baselineCapabilitySet,omitempty"`
	// AdditionalEnabledCapabilities adds capabilities by name (baremetal, Ingress, NodeTuning, ...).
	AdditionalEnabledCapabilities []string `yaml:"additionalEnabledCapabilities,omitempty" json:"additionalEnabledCapabilities,omitempty"`
}

// IsSet reports whether the section is written.
func (c Capabilities) IsSet() bool {
	return c.BaselineCapabilitySet != "" || len(c.AdditionalEnabledCapabilities) > 0
}

// capabilitySets are the baseline sets and the capabilities each enables, as openshift/api
// (config/v1 ClusterVersionCapabilitySets) defines them; a set is named after the release that
// introduced it, and a capability is known from the first set that holds it.
var capabilitySets = []struct {
	name string
	caps []string
}{
	{"v4.11", []string{"baremetal", "marketplace", "openshift-samples", "MachineAPI"}},
	{"v4.12", []string{"Console", "Insights", "Storage", "CSISnapshot"}},
	{"v4.13", []string{"NodeTuning"}},
	{"v4.14", []string{"Build", "DeploymentConfig", "ImageRegistry"}},
	{"v4.15", []string{"OperatorLifecycleManager", "CloudCredential"}},
	{"v4.16", []string{"Ingress", "CloudControllerManager"}},
	{"v4.17", nil},
	{"v4.18", []string{"OperatorLifecycleManagerV1"}},
}

// setCaps returns the capabilities a baseline set enables, and whether the set is known.
func setCaps(set string) ([]string, bool) {
	switch set {
	case "None":
		return nil, true
	case "", "vCurrent":
		set = capabilitySets[len(capabilitySets)-1].name
	}
	var caps []string
	for _, s := range capabilitySets {
		caps = append(caps, s.caps...)
		if s.name == set {
			return caps, true
		}
	}
	return nil, false
}

// capabilityMinor is the minor release that introduced a capability, 0 when it is unknown.
func capabilityMinor(name string) int {
	for _, s := range capabilitySets {
		if slices.Contains(s.caps, name) {
			return setMinor(s.name)
		}
	}
	return 0
}

// setMinor is the minor of a "v4.N" set name, 0 for None and vCurrent.
func setMinor(set string) int {
	n, err := strconv.Atoi(strings.TrimPrefix(set, "v4."))
	if err != nil || !strings.HasPrefix(set, "v4.") {
		return 0
	}
	return n
}

// capabilities holds the section to the installer's rules (validateCapabilities and the checks
// in ValidateInstallConfig): known set and names; Ingress enabled; on platform baremetal with
// baseline None, baremetal listed; marketplace only with OperatorLifecycleManager. bootstrap also
// refuses a set or a capability newer than the release (the release would not know it), and
// names the right spelling of a known capability written in another case.
func (c *checker) capabilities() {
	cp := c.s.Cluster.Capabilities
	if !cp.IsSet() {
		return
	}
	const base = "cluster.capabilities"
	minor, known := c.s.releaseMinor()
	var sets []string
	for _, s := range capabilitySets {
		sets = append(sets, s.name)
	}
	sets = append([]string{"None"}, append(sets, "vCurrent")...)
	enabled, ok := setCaps(cp.BaselineCapabilitySet)
	if !ok {
		msg := fmt.Sprintf("the installer says Unsupported value: %q: supported values: %s", cp.BaselineCapabilitySet, quoteAll(sets))
		if setMinor(cp.BaselineCapabilitySet) > setMinor(capabilitySets[len(capabilitySets)-1].name) {
			// a newer release's set: an installer newer than bootstrap's table may know it
			msg = fmt.Sprintf("%q is newer than the sets bootstrap knows (%s)", cp.BaselineCapabilitySet, quoteAll(sets))
		}
		c.err(base+".baselineCapabilitySet", msg, "use None (and list what the site needs), or vCurrent (every capability)")
		return
	}
	if m := setMinor(cp.BaselineCapabilitySet); known && m > minor {
		c.err(base+".baselineCapabilitySet", fmt.Sprintf("%s is newer than release %s, which does not know it", cp.BaselineCapabilitySet, c.s.Cluster.Release.Version),
			fmt.Sprintf("use v4.%d or older, or vCurrent", minor))
	}
	var all []string
	for _, s := range capabilitySets {
		all = append(all, s.caps...)
	}
	seen := map[string]bool{}
	for i, name := range cp.AdditionalEnabledCapabilities {
		path := fmt.Sprintf("%s.additionalEnabledCapabilities[%d]", base, i)
		switch m := capabilityMinor(name); {
		case m == 0:
			remedy := "use one of: " + strings.Join(all, ", ")
			for _, a := range all {
				if strings.EqualFold(a, name) {
					remedy = fmt.Sprintf("write %s (capability names are case-sensitive)", a)
				}
			}
			c.err(path, fmt.Sprintf("the installer says Unsupported value: %q: it is no known capability", name), remedy)
			continue
		case known && m > minor:
			c.err(path, fmt.Sprintf("%s was introduced in OpenShift 4.%d; release %s does not know it", name, m, c.s.Cluster.Release.Version), "remove it, or install a newer release")
		case seen[name]:
			c.warn(path, fmt.Sprintf("%s is listed twice", name), "list each capability once")
		}
		seen[name] = true
		enabled = append(enabled, name)
	}
	has := func(n string) bool { return slices.Contains(enabled, n) }
	if !has("Ingress") {
		c.err(base, "Ingress is not enabled: the installer says the Ingress capability is required", "add Ingress to additionalEnabledCapabilities")
	}
	if cp.BaselineCapabilitySet == "None" && c.s.Cluster.Platform == PlatformBaremetal && !slices.Contains(cp.AdditionalEnabledCapabilities, "baremetal") {
		c.err(base+".additionalEnabledCapabilities", "the installer says platform baremetal requires the baremetal capability", "add baremetal to additionalEnabledCapabilities")
	}
	if has("marketplace") && !has("OperatorLifecycleManager") {
		c.err(base+".additionalEnabledCapabilities", "the installer says the marketplace capability requires the OperatorLifecycleManager capability",
			"add OperatorLifecycleManager (bootstrap's CatalogSources and the GitOps operator need it too)")
	} else if !has("OperatorLifecycleManager") {
		c.err(base, "OperatorLifecycleManager is not enabled: bootstrap installs OpenShift GitOps through OLM (handoff) and points OLM at the mirror's catalogs",
			"add OperatorLifecycleManager to additionalEnabledCapabilities")
	}
	if d := c.s.Day1.DisableDefaultSources; d != nil && *d && !has("marketplace") {
		c.err(base, "marketplace is not enabled, yet day1.disableDefaultSources writes an OperatorHub object, whose API the marketplace capability provides: the install would fail applying it",
			"add marketplace to additionalEnabledCapabilities, or set day1.disableDefaultSources: false")
	}
}

// cpuPartitioning holds cpuPartitioningMode to install-config's values.
func (c *checker) cpuPartitioning() {
	switch m := c.s.Cluster.CPUPartitioningMode; m {
	case "", "None", "AllNodes":
	default:
		remedy := `use "None" or "AllNodes" (workload partitioning on every node, for telco low-latency profiles)`
		if strings.EqualFold(m, "AllNodes") || strings.EqualFold(m, "None") {
			remedy = "the values are case-sensitive: " + remedy
		}
		c.err("cluster.cpuPartitioningMode", fmt.Sprintf(`the installer says Unsupported value: %q: supported values: "AllNodes", "None"`, m), remedy)
	}
}
