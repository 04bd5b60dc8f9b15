package agentiso

import (
	"fmt"
	"net"
	"net/netip"
	"regexp"
	"strings"

	"github.com/bootstrap-dev/bootstrap/internal/finding"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// Invalid returns an error listing every failure of ps (a *ValidationError), or nil when there
// is none.
func Invalid(ps finding.List) error {
	errs := ps.Only(finding.Fail)
	if len(errs) == 0 {
		return nil
	}
	lines := make([]string, len(errs))
	for i, p := range errs {
		lines[i] = "  " + p.String()
	}
	return &ValidationError{Problems: errs, text: fmt.Sprintf("%d problem(s) the installer would reject:\n%s", len(errs), strings.Join(lines, "\n"))}
}

// ValidationError is returned when the profile has problems the installer would reject; callers
// branch on it to exit with the invalid-profile code.
type ValidationError struct {
	Problems finding.List
	text     string
}

func (e *ValidationError) Error() string { return e.text }

// Validate checks the site for what the agent-based installer would reject later, often silently
// or half-way through the install. It returns every problem at once.
func Validate(s *site.Site) finding.List {
	v := &validator{s: s}
	v.roles()
	v.macs()
	for i := range s.Nodes {
		v.networkConfig(i)
		v.rootDevice(i)
	}
	v.rendezvous()
	if s.Registry.AuthFile == "" {
		v.add(finding.Warn, "", "registry.authFile", "not set: the pull secret gets a placeholder entry for %s, so the registry must allow anonymous pulls", s.Registry.Host)
	}
	return v.out
}

type validator struct {
	s   *site.Site
	out finding.List
}

func (v *validator) add(sev finding.Status, node, field, format string, args ...any) {
	v.out = append(v.out, finding.Finding{Status: sev, Node: node, Path: field, Message: fmt.Sprintf(format, args...)})
}

func (v *validator) roles() {
	s := v.s
	masters, workers := countRoles(s)
	seen := map[string]int{}
	for i, n := range s.Nodes {
		f := fmt.Sprintf("nodes[%d]", i)
		if n.Role != site.RoleMaster && n.Role != site.RoleWorker {
			v.add(finding.Fail, n.Name, f+".role", "role %q is not master or worker", n.Role)
		}
		if j, ok := seen[n.Name]; ok {
			v.add(finding.Fail, n.Name, f+".name", "hostname already used by nodes[%d]; agent-config hosts need unique hostnames", j)
		}
		seen[n.Name] = i
		if len(n.Interfaces) == 0 {
			v.add(finding.Fail, n.Name, f+".interfaces", "no interfaces: the agent matches a booted host to its entry by MAC, list at least the boot NIC")
		}
	}
	if masters != 1 && masters != 3 && masters != 4 && masters != 5 {
		v.add(finding.Fail, "", "nodes", "%d master nodes; the installer supports 1 (single node), 3, 4 or 5", masters)
	}
	single := masters == 1 && workers == 0
	if single && len(s.Cluster.APIVIPs) > 0 {
		v.add(finding.Fail, "", "cluster.apiVIPs", "a single-node cluster uses platform none: remove apiVIPs and ingressVIPs and point DNS at the node")
	}
	if !single && len(s.Cluster.APIVIPs) == 0 {
		v.add(finding.Warn, "", "cluster.apiVIPs", "no VIPs on a multi-node cluster: platform none, an external load balancer must serve api and *.apps")
	}
	if len(s.Cluster.APIVIPs) > 0 && len(s.Cluster.IngressVIPs) != len(s.Cluster.APIVIPs) {
		v.add(finding.Fail, "", "cluster.ingressVIPs", "give as many ingressVIPs as apiVIPs (one per IP family)")
	}
}

func (v *validator) macs() {
	owner := map[string]string{}
	for i, n := range v.s.Nodes {
		var mine []string
		for j, itf := range n.Interfaces {
			f := fmt.Sprintf("nodes[%d].interfaces[%d].macAddress", i, j)
			hw, err := net.ParseMAC(itf.MACAddress)
			if err != nil || len(hw) != 6 {
				v.add(finding.Fail, n.Name, f, "%q is not a MAC address (aa:bb:cc:dd:ee:ff)", itf.MACAddress)
				continue
			}
			mac := hw.String()
			mine = append(mine, mac)
			if prev, ok := owner[mac]; ok {
				v.add(finding.Fail, n.Name, f, "MAC %s is also listed at %s: each MAC identifies one host", mac, prev)
				continue
			}
			owner[mac] = fmt.Sprintf("nodes[%d] (%s)", i, n.Name)
		}
		if n.BootMAC != "" {
			hw, err := net.ParseMAC(n.BootMAC)
			if err != nil {
				v.add(finding.Fail, n.Name, fmt.Sprintf("nodes[%d].bootMAC", i), "%q is not a MAC address", n.BootMAC)
			} else if !contains(mine, hw.String()) {
				v.add(finding.Fail, n.Name, fmt.Sprintf("nodes[%d].bootMAC", i), "boot MAC %s is not among the node's interfaces; add it to interfaces[] so the agent can match the host", hw)
			}
		}
	}
}

func (v *validator) networkConfig(i int) {
	n := v.s.Nodes[i]
	if n.NetworkConfig == nil {
		return
	}
	base := fmt.Sprintf("nodes[%d].networkConfig", i)
	physical := map[string]bool{}
	for _, itf := range n.Interfaces {
		physical[itf.Name] = true
	}
	ifaces, _ := n.NetworkConfig["interfaces"].([]any)
	defined := map[string]bool{}
	for k := range physical {
		defined[k] = true
	}
	for _, raw := range ifaces {
		if m, ok := raw.(map[string]any); ok {
			if name, _ := m["name"].(string); name != "" && !site.NMStateNeedsNIC(str(m["type"])) {
				defined[name] = true
			}
		}
	}
	ref := func(field, name, what string) {
		if !defined[name] {
			v.add(finding.Fail, n.Name, field, "%s %q is neither in interfaces[] nor defined in networkConfig; "+
				"a typo here silently leaves the %s down", what, name, what)
		}
	}
	for j, raw := range ifaces {
		m, ok := raw.(map[string]any)
		if !ok {
			v.add(finding.Fail, n.Name, fmt.Sprintf("%s.interfaces[%d]", base, j), "not a mapping")
			continue
		}
		f := fmt.Sprintf("%s.interfaces[%d]", base, j)
		name, typ := str(m["name"]), str(m["type"])
		if name == "" {
			v.add(finding.Fail, n.Name, f+".name", "interface without a name")
			continue
		}
		if site.NMStateNeedsNIC(typ) && !physical[name] {
			v.add(finding.Fail, n.Name, f+".name", "NIC %q is not in interfaces[] (names there: %s); "+
				"the agent maps names to MACs through interfaces[], so this NIC would stay unconfigured", name, strings.Join(sortedKeys(physical), ", "))
		}
		if la, ok := m["link-aggregation"].(map[string]any); ok {
			ports, _ := la["port"].([]any)
			if ports == nil {
				ports, _ = la["slaves"].([]any)
			}
			for k, p := range ports {
				ref(fmt.Sprintf("%s.link-aggregation.port[%d]", f, k), str(p), "bond port")
			}
		}
		if vl, ok := m["vlan"].(map[string]any); ok {
			ref(f+".vlan.base-iface", str(vl["base-iface"]), "VLAN base interface")
		}
		if br, ok := m["bridge"].(map[string]any); ok {
			ports, _ := br["port"].([]any)
			for k, p := range ports {
				if pm, ok := p.(map[string]any); ok {
					ref(fmt.Sprintf("%s.bridge.port[%d].name", f, k), str(pm["name"]), "bridge port")
				}
			}
		}
	}
	if routes, ok := n.NetworkConfig["routes"].(map[string]any); ok {
		cfg, _ := routes["config"].([]any)
		for k, r := range cfg {
			if rm, ok := r.(map[string]any); ok && str(rm["next-hop-interface"]) != "" {
				ref(fmt.Sprintf("%s.routes.config[%d].next-hop-interface", base, k), str(rm["next-hop-interface"]), "route interface")
			}
		}
	}
}

var (
	ataPath   = regexp.MustCompile(`-ata-\d+$`)
	ataPathV9 = regexp.MustCompile(`-ata-\d+\.0$`)
)

func (v *validator) rootDevice(i int) {
	n := v.s.Nodes[i]
	f := fmt.Sprintf("nodes[%d].rootDevice", i)
	d := n.RootDevice
	switch {
	case d == "":
		v.add(finding.Fail, n.Name, f, "no root device: give /dev/disk/by-path/... so the install lands on the right disk")
		return
	case strings.HasPrefix(d, "/dev/disk/by-id/"):
		// The installer (pkg/types/baremetal/validation ValidateHostRootDeviceHints, 4.16+) accepts a
		// deviceName only directly under /dev/ or under /dev/disk/by-path/.
		v.add(finding.Fail, n.Name, f, "%s: the installer accepts rootDeviceHints.deviceName only under /dev/disk/by-path/ "+
			"(by-id names are rejected); use the disk's by-path name (`ls -l /dev/disk/by-path` on the discovery ISO); "+
			"for SATA/AHCI disks RHCOS 4.13+ (RHEL 9) uses the -ata-N.0 form, older releases (RHEL 8) -ata-N", d)
		return
	case !strings.HasPrefix(d, "/dev/disk/by-path/"):
		v.add(finding.Fail, n.Name, f, "%q is not a stable name (kernel names like /dev/sda change between boots); use /dev/disk/by-path/...", d)
		return
	}
	// RHEL 8 kernels (RHCOS before 4.13) name SATA/AHCI paths ...-ata-1, RHEL 9 kernels (4.13+)
	// ...-ata-1.0; a name from the other generation matches no disk and the agent waits forever.
	if ataPath.MatchString(d) {
		v.add(finding.Warn, n.Name, f, "%s uses the RHEL 8 by-path form; RHCOS 4.13+ (RHEL 9) names this disk %s.0 — "+
			"check `ls -l /dev/disk/by-path` on the discovery ISO", d, d)
	} else if ataPathV9.MatchString(d) && releaseBefore(v.s.Cluster.Release.Version, 4, 13) {
		v.add(finding.Warn, n.Name, f, "%s uses the RHEL 9 by-path form but release %s boots a RHEL 8 kernel, which names it %s",
			d, v.s.Cluster.Release.Version, strings.TrimSuffix(d, ".0"))
	}
}

func (v *validator) rendezvous() {
	s := v.s
	rip := s.Cluster.RendezvousIP
	f := "cluster.rendezvousIP"
	if rip == "" {
		v.add(finding.Fail, "", f, "no rendezvousIP: set it to the static address of one control-plane node")
		return
	}
	addr, err := netip.ParseAddr(rip)
	if err != nil {
		v.add(finding.Fail, "", f, "%q is not an IP address", rip)
		return
	}
	static := false
	for i, n := range s.Nodes {
		ips := staticIPs(n.NetworkConfig)
		if len(ips) > 0 {
			static = true
		}
		for _, ip := range ips {
			if ip == addr {
				if n.Role != site.RoleMaster {
					v.add(finding.Fail, n.Name, f, "%s is the static address of nodes[%d] (%s), a %s; the rendezvous host must be a control-plane node", rip, i, n.Name, n.Role)
				}
				return
			}
		}
	}
	if static {
		v.add(finding.Fail, "", f, "%s is not the static address of any control-plane node's networkConfig; the agents would wait for a rendezvous host that never appears", rip)
		return
	}
	v.add(finding.Warn, "", f, "no node has a static address (DHCP): the DHCP server must hand %s to one control-plane node — "+
		"reserve it for that node's boot MAC, or the install never starts", rip)
}

// staticIPs returns the addresses in an nmstate document's interfaces[].ipv4/ipv6.address[].ip.
func staticIPs(nc map[string]any) []netip.Addr {
	var out []netip.Addr
	ifaces, _ := nc["interfaces"].([]any)
	for _, raw := range ifaces {
		m, _ := raw.(map[string]any)
		for _, fam := range []string{"ipv4", "ipv6"} {
			ipc, _ := m[fam].(map[string]any)
			addrs, _ := ipc["address"].([]any)
			for _, a := range addrs {
				am, _ := a.(map[string]any)
				if ip, err := netip.ParseAddr(str(am["ip"])); err == nil {
					out = append(out, ip)
				}
			}
		}
	}
	return out
}

func str(v any) string {
	if v == nil {
		return ""
	}
	if s, ok := v.(string); ok {
		return s
	}
	return fmt.Sprint(v)
}
