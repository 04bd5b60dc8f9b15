package site

import (
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

var versionRE = regexp.MustCompile(`^4\.(\d+)(\.\d+)?(-[0-9A-Za-z.-]+)?$`)

// releaseMinor returns the minor of cluster.release.version ("4.18.3" → 18).
func (s *Site) releaseMinor() (int, bool) {
	m := versionRE.FindStringSubmatch(s.Cluster.Release.Version)
	if m == nil {
		return 0, false
	}
	n, err := strconv.Atoi(m[1])
	return n, err == nil
}

func (c *checker) cluster() {
	cl := c.s.Cluster
	if cl.Name != "" && !isDNSLabel(cl.Name) {
		c.err("cluster.name", fmt.Sprintf("%q is not a DNS label", cl.Name), "use lower-case letters, digits and '-', e.g. "+suggestLabel(cl.Name))
	} else if len(cl.Name) > maxClusterName {
		// openshift-install (validate.ClusterName): api.<name> and *.apps.<name> must fit a DNS label.
		c.err("cluster.name", fmt.Sprintf("%q is %d characters; the installer says it must be no more than %d characters", cl.Name, len(cl.Name), maxClusterName),
			fmt.Sprintf("shorten it to %d characters or fewer", maxClusterName))
	}
	if d := cl.BaseDomain; d != "" {
		if why := subdomainProblem(d); why != "" {
			c.err("cluster.baseDomain", fmt.Sprintf("%q is not a DNS domain: %s", d, why), domainRemedy(d, "lab.example.com"))
		} else if cl.Name != "" && len(cl.Name)+1+len(d) > 253 {
			c.err("cluster.baseDomain", fmt.Sprintf("the cluster domain %s.%s is longer than 253 characters", cl.Name, d), "use a shorter base domain or cluster name")
		}
	}
	r := cl.Release
	if r.Version != "" && !versionRE.MatchString(r.Version) {
		c.err("cluster.release.version", fmt.Sprintf("%q is not an OpenShift 4 version", r.Version), "write it as 4.Y or 4.Y.Z, e.g. 4.18.12 (quote it: \"4.20\")")
	}
	if r.Image != "" && !strings.Contains(r.Image, "@sha256:") {
		c.warn("cluster.release.image", "the release image is referenced by tag: what is installed can change under the same profile",
			"pin it by digest (quay.io/openshift-release-dev/ocp-release@sha256:...), shown by `oc adm release info`")
	}
	if a := r.Architecture; a != "" && !slices.Contains([]string{"amd64", "arm64", "ppc64le", "s390x"}, a) {
		c.err("cluster.release.architecture", fmt.Sprintf("architecture %q is not supported", a), "use amd64 (x86_64) or arm64")
	}
	if p := cl.Platform; p != "" && p != PlatformBaremetal && p != PlatformNone {
		c.err("cluster.platform", fmt.Sprintf("platform %q is not supported", p), "use baremetal, or none for single-node OpenShift")
	}
	if t := cl.Networking.NetworkType; t != "" && t != defaultNetworkType {
		c.err("cluster.networking.networkType", fmt.Sprintf("network type %q is not supported", t),
			"use OVNKubernetes (OpenShiftSDN was removed in OpenShift 4.15)")
	}
	for i, src := range cl.NTPSources {
		c.ntpSource(fmt.Sprintf("cluster.ntpSources[%d]", i), src)
	}
	if len(cl.NTPSources) == 0 {
		c.warn("cluster.ntpSources", "no NTP sources: air-gapped nodes cannot reach the default RHCOS pools, and certificates fail when clocks drift",
			"list the site's NTP servers")
	}
	for i, d := range cl.DNSServers {
		_, err := netip.ParseAddr(d)
		if _, perr := netip.ParseAddrPort(d); err != nil && perr != nil {
			c.err(fmt.Sprintf("cluster.dnsServers[%d]", i), fmt.Sprintf("%q is not an IP address", d), "write the resolver's address, e.g. 10.0.0.2 (or 127.0.0.1:5353 with a port)")
		}
	}
	if k := cl.SSHKeyFile; k != "" && !strings.HasSuffix(k, ".pub") {
		c.warn("cluster.sshKeyFile", "the SSH key file does not end in .pub: make sure it is the public key (it is written into install-config)",
			"point it at the .pub file; gather uses the private key beside it")
	}
	c.duration("cluster.installer.bootstrapTimeout", cl.Installer.BootstrapTimeout)
	c.duration("cluster.installer.installTimeout", cl.Installer.InstallTimeout)
}

func (c *checker) duration(path, v string) {
	if v == "" {
		return
	}
	if d, err := time.ParseDuration(v); err != nil || d <= 0 {
		c.err(path, fmt.Sprintf("%q is not a positive duration", v), "write a Go duration such as 90m or 2h30m")
	}
}

// topology checks the node counts the agent installer accepts and the platform they imply.
func (c *checker) topology() {
	s := c.s
	if len(s.Nodes) == 0 {
		return
	}
	masters, workers := s.ControlPlaneCount(), s.WorkerCount()
	minor, ok := s.releaseMinor()
	allowed := []int{1, 3}
	text := "1 or 3"
	if !ok || minor >= 18 { // 4 and 5 control-plane nodes: OpenShift 4.18+ on x86_64
		allowed, text = []int{1, 3, 4, 5}, "1, 3, 4 or 5"
	}
	count := c.err
	if bad := c.badRole(); bad != "" { // a misspelled role took a node out of the count: fix that first
		count = func(path, msg, remedy string) { c.errBecause(bad, path, msg, remedy) }
	}
	switch {
	case masters == 0:
		count("nodes", "no node has role master", "give 3 nodes `role: master` (or 1 for single-node OpenShift)")
	case masters == 2:
		count("nodes", "2 control-plane nodes is not an installable topology (it needs an arbiter or fencing, not supported here)",
			"use 3 control-plane nodes, or 1 for single-node OpenShift")
	case !slices.Contains(allowed, masters):
		count("nodes", fmt.Sprintf("%d control-plane nodes: the agent installer for OpenShift %s accepts %s", masters, s.Cluster.Release.Version, text),
			"change the number of nodes with role master (4 and 5 need OpenShift 4.18 or later)")
	case masters > 3 && s.Cluster.Release.Architecture != "amd64":
		c.err("nodes", fmt.Sprintf("%d control-plane nodes need x86_64 (amd64)", masters), "use 3 control-plane nodes on this architecture")
	}
	if masters == 1 {
		if workers > 0 {
			c.err("nodes", fmt.Sprintf("single-node OpenShift installs with 0 workers; this profile has %d", workers),
				"remove the workers and add them after install, or use 3 control-plane nodes")
		}
		if s.Cluster.Platform == PlatformBaremetal {
			c.err("cluster.platform", "single-node OpenShift uses platform none", "set `platform: none` or remove the field")
		}
	} else if masters > 1 && s.Cluster.Platform == PlatformNone {
		c.warn("cluster.platform", "platform none with several nodes needs an external load balancer and DNS for api and *.apps",
			"use platform baremetal (VIPs kept by the cluster) unless the site provides the load balancer")
	}
}

// networks checks CIDRs, VIPs and the rendezvous address.
func (c *checker) networks() {
	nw := c.s.Cluster.Networking
	var machine []netip.Prefix
	var all, machineN, clusterN, serviceN []namedPrefix
	for i, m := range nw.MachineNetwork {
		path := fmt.Sprintf("cluster.networking.machineNetwork[%d]", i)
		if p, ok := c.prefix(path, m); ok {
			machine = append(machine, p)
			machineN = append(machineN, namedPrefix{path, p})
		}
	}
	var v4HostPrefix *namedPrefix
	for i, cn := range nw.ClusterNetwork {
		path := fmt.Sprintf("cluster.networking.clusterNetwork[%d]", i)
		p, ok := c.prefix(path+".cidr", cn.CIDR)
		if !ok {
			continue
		}
		clusterN = append(clusterN, namedPrefix{path + ".cidr", p})
		switch {
		case cn.HostPrefix == 0:
		case p.Addr().Is6() && cn.HostPrefix != 64:
			c.err(path+".hostPrefix", fmt.Sprintf("hostPrefix %d on IPv6 %s: the installer says cluster network host subnetwork prefix must be 64 for IPv6 networks", cn.HostPrefix, p),
				"set `hostPrefix: 64` (each node gets a /64 of the pod network)")
		case cn.HostPrefix < p.Bits():
			c.err(path+".hostPrefix", fmt.Sprintf("hostPrefix %d does not fit in %s: the installer says cluster network host subnetwork prefix must not be larger size than CIDR %s", cn.HostPrefix, p, p),
				fmt.Sprintf("use a prefix between %d and %d (23 gives each node 512 pod addresses)", p.Bits(), maxHostPrefix(p)))
		case !c.hostPrefixRoom(path, p, cn.HostPrefix):
		case p.Addr().Is4() && v4HostPrefix != nil && v4HostPrefix.p.Bits() != cn.HostPrefix:
			c.err(path+".hostPrefix", fmt.Sprintf("hostPrefix %d differs from %s's %d: the installer says cluster network host subnetwork prefix must be the same value for IPv4 networks",
				cn.HostPrefix, v4HostPrefix.path, v4HostPrefix.p.Bits()), fmt.Sprintf("use `hostPrefix: %d` on every IPv4 cluster network", v4HostPrefix.p.Bits()))
		case p.Addr().Is4() && v4HostPrefix == nil:
			// remember the first IPv4 hostPrefix (carried in a prefix's length)
			v4HostPrefix = &namedPrefix{path + ".hostPrefix", netip.PrefixFrom(p.Addr(), cn.HostPrefix)}
		}
	}
	for i, sn := range nw.ServiceNetwork {
		path := fmt.Sprintf("cluster.networking.serviceNetwork[%d]", i)
		if p, ok := c.prefix(path, sn); ok {
			serviceN = append(serviceN, namedPrefix{path, p})
			c.serviceSize(path, p)
		}
	}
	all = append(append(append(all, machineN...), clusterN...), serviceN...)
	c.ovnReserved(all)
	c.families(machineN, clusterN, serviceN)
	for i := range all {
		for j := 0; j < i; j++ {
			if all[i].p.Overlaps(all[j].p) {
				c.err(all[i].path, fmt.Sprintf("%s overlaps %s (%s)", all[i].p, all[j].p, all[j].path),
					"machine, cluster and service networks must be disjoint; choose another range")
			}
		}
	}
	cl := c.s.Cluster
	if cl.Platform == PlatformNone {
		for _, f := range []struct {
			path string
			vips []string
		}{{"cluster.apiVIPs", cl.APIVIPs}, {"cluster.ingressVIPs", cl.IngressVIPs}} {
			if len(f.vips) > 0 {
				c.err(f.path, "platform none takes no VIPs (the API and ingress are the node itself or an external load balancer)",
					"remove it, or use platform baremetal with 3 or more control-plane nodes")
			}
		}
	} else if cl.Platform == PlatformBaremetal {
		if len(cl.APIVIPs) == 0 {
			c.err("cluster.apiVIPs", "platform baremetal needs an API VIP", "add `apiVIPs: [ADDRESS]`: a free address in the machine network that DNS api.<cluster>.<domain> resolves to")
		}
		if len(cl.IngressVIPs) == 0 {
			c.err("cluster.ingressVIPs", "platform baremetal needs an ingress VIP", "add `ingressVIPs: [ADDRESS]`: a free address in the machine network that *.apps.<cluster>.<domain> resolves to")
		}
	}
	// The assisted service rejects a host with no address in the machine network
	// ("belongs-to-machine-cidr"), and the install stalls waiting for it.
	// Per address family: a dual-stack host belongs to the machine network of each family. An
	// address outside the machine networks (a storage or backend VLAN) is fine beside one inside;
	// a family the node gets from DHCP or autoconf only is not checked.
	for i := range c.s.Nodes {
		addrs := c.nodeAddrs[i]
		for _, is4 := range []bool{true, false} {
			var fam []netip.Prefix
			for _, m := range machine {
				if m.Addr().Is4() == is4 {
					fam = append(fam, m)
				}
			}
			var mine []nmAddr
			for _, a := range addrs {
				if a.addr.Is4() == is4 {
					mine = append(mine, a)
				}
			}
			if len(fam) == 0 || len(mine) == 0 || slices.ContainsFunc(mine, func(a nmAddr) bool {
				return slices.ContainsFunc(fam, func(m netip.Prefix) bool { return m.Contains(a.addr) })
			}) {
				continue
			}
			what := "static addresses"
			if len(machine) > len(fam) {
				what = "static " + family(is4) + " addresses"
			}
			c.err(mine[0].path, fmt.Sprintf("none of node %q's %s is in the machine network (%s)", c.s.Nodes[i].Name, what, joinPrefixes(fam)),
				"give the node an address in cluster.networking.machineNetwork, or add its subnet there "+
					"(the assisted service holds back a host outside the machine network, and the install waits for it)")
		}
	}
	vips := map[netip.Addr]string{}
	c.vips("cluster.apiVIPs", cl.APIVIPs, machine, vips)
	c.vips("cluster.ingressVIPs", cl.IngressVIPs, machine, vips)
	if cl.Platform != PlatformNone {
		c.vipFamilies("cluster.apiVIPs", "API", cl.APIVIPs, machineN, clusterN, serviceN)
		c.vipFamilies("cluster.ingressVIPs", "Ingress", cl.IngressVIPs, machineN, clusterN, serviceN)
	}
	c.rendezvous(machine)
}

// prefix parses a CIDR and insists that host bits are zero.
func (c *checker) prefix(path, v string) (netip.Prefix, bool) {
	p, err := netip.ParsePrefix(v)
	if err != nil {
		c.err(path, fmt.Sprintf("%q is not a CIDR", v), "write an address and prefix length, e.g. 10.0.0.0/24")
		return p, false
	}
	if p.Masked() != p {
		c.err(path, fmt.Sprintf("%s has host bits set", v), fmt.Sprintf("write the network address: %s", p.Masked()))
		return p, false
	}
	if p.Addr().IsUnspecified() {
		c.err(path, fmt.Sprintf("%s: the installer says address must be specified", v), "write the network's own address, e.g. 10.0.0.0/24")
		return p, false
	}
	return p, true
}

func (c *checker) vips(path string, list []string, machine []netip.Prefix, seen map[netip.Addr]string) {
	families := map[bool]bool{}
	for i, v := range list {
		p := fmt.Sprintf("%s[%d]", path, i)
		a, err := netip.ParseAddr(v)
		if err != nil || a.Zone() != "" {
			c.err(p, fmt.Sprintf("%q is not an IP address", v), "write an address, e.g. 10.0.0.5")
			continue
		}
		if families[a.Is4()] {
			c.err(p, "two VIPs of the same address family", "give at most one IPv4 and one IPv6 VIP (dual stack)")
		}
		families[a.Is4()] = true
		if len(machine) > 0 && !slices.ContainsFunc(machine, func(m netip.Prefix) bool { return m.Contains(a) }) {
			c.err(p, fmt.Sprintf("VIP %s is outside the machine network (%s)", a, joinPrefixes(machine)),
				"choose a free address inside cluster.networking.machineNetwork")
		}
		if first, dup := seen[a]; dup {
			// at the first of the two (the API VIP when an ingress VIP repeats it), where the installer
			// places it too ("platform.baremetal.apiVIPs: ... must not be one of the Ingress VIPs")
			c.err(first, fmt.Sprintf("VIP %s is also %s", a, p), "the API and ingress VIPs must be different addresses")
		} else {
			seen[a] = p
		}
		if o, isNode := c.nodeIPs[a.String()]; isNode {
			c.err(p, fmt.Sprintf("VIP %s is node %q's own address (%s)", a, o.node, o.path), "choose a free address: the cluster moves a VIP between nodes")
		}
	}
}

func (c *checker) rendezvous(machine []netip.Prefix) {
	r := c.s.Cluster.RendezvousIP
	if r == "" {
		return
	}
	a, err := netip.ParseAddr(r)
	if err != nil {
		c.err("cluster.rendezvousIP", fmt.Sprintf("%q is not an IP address", r), "write the address of a control-plane node, e.g. 10.0.0.11")
		return
	}
	if len(machine) > 0 && !slices.ContainsFunc(machine, func(m netip.Prefix) bool { return m.Contains(a) }) {
		c.err("cluster.rendezvousIP", fmt.Sprintf("%s is outside the machine network (%s)", a, joinPrefixes(machine)),
			"use the control-plane node's address on the machine network")
	}
	var masterIPs []string
	for ip, o := range c.nodeIPs {
		if o.role == RoleMaster {
			masterIPs = append(masterIPs, ip)
		}
	}
	slices.Sort(masterIPs)
	if o, ok := c.nodeIPs[a.String()]; ok {
		report := c.err
		if o.role != RoleWorker { // a misspelled role: the role is the error to fix
			report = func(path, msg, remedy string) { c.errBecause(c.badRole(), path, msg, remedy) }
		}
		if o.role != RoleMaster {
			report("cluster.rendezvousIP", fmt.Sprintf("%s is the address of %q, a %s; the rendezvous host must be a control-plane node", a, o.node, o.role),
				"use the address of a node with role master")
		}
		return
	}
	if len(masterIPs) == 0 {
		c.warn("cluster.rendezvousIP", "no control-plane node has a static address in networkConfig, so the rendezvous IP cannot be checked",
			"make sure DHCP reserves this address for a control-plane node, or give the nodes static networkConfig")
		return
	}
	c.err("cluster.rendezvousIP", fmt.Sprintf("%s is not the static address of any control-plane node (they have %s)", a, strings.Join(masterIPs, ", ")),
		"use one of those addresses, usually the first control-plane node's")
}

func joinPrefixes(ps []netip.Prefix) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, ", ")
}
