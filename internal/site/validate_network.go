package site

import (
	"fmt"
	"net/netip"
	"strings"
)

// namedPrefix is a parsed CIDR with the field path it is written at.
type namedPrefix struct {
	path string
	p    netip.Prefix
}

// ovnSubnets are the ranges OVN-Kubernetes keeps for itself unless install-config's
// networking.ovnKubernetesConfig moves them (bootstrap does not render that section), with the
// installer's name for each (pkg/validate: OVNIPv4JoinSubnet and the others).
var ovnSubnets = []struct {
	kind string
	p    netip.Prefix
}{
	{"internal", netip.MustParsePrefix("100.64.0.0/16")},
	{"transit", netip.MustParsePrefix("100.88.0.0/16")},
	{"masquerade", netip.MustParsePrefix("169.254.0.0/17")},
	{"internal", netip.MustParsePrefix("fd98::/64")},
	{"transit", netip.MustParsePrefix("fd97::/64")},
	{"masquerade", netip.MustParsePrefix("fd69::/112")},
}

// ovnReserved reports machine, cluster and service networks that overlap OVN-Kubernetes' own
// subnets; the installer refuses them ("must not overlap with OVNKubernetes default ... subnet").
func (c *checker) ovnReserved(nets []namedPrefix) {
	for _, n := range nets {
		for _, o := range ovnSubnets {
			if n.p.Overlaps(o.p) {
				c.err(n.path, fmt.Sprintf("%s overlaps OVN-Kubernetes' %s subnet %s: the installer says it must not overlap with OVNKubernetes default %s subnet %s",
					n.p, o.kind, o.p, o.kind, o.p),
					"choose a range outside 100.64.0.0/16, 100.88.0.0/16 and 169.254.0.0/17 (IPv6: fd98::/64, fd97::/64, fd69::/112); "+
						"a site that uses CGNAT space for its machines must renumber them or move OVN's subnets in a day-1 manifest, which bootstrap does not render")
			}
		}
	}
}

// serviceSize holds a service network to the installer's bounds (validate.ServiceSubnetCIDR).
func (c *checker) serviceSize(path string, p netip.Prefix) {
	switch {
	case p.Addr().Is4() && p.Bits() < 12:
		c.err(path, fmt.Sprintf("%s: the installer says subnet size for IPv4 service network must be /12 or greater (/16 is recommended)", p),
			"use a /16, e.g. 172.30.0.0/16")
	case p.Addr().Is6() && p.Bits() < 108:
		c.err(path, fmt.Sprintf("%s: the installer says subnet size for IPv6 service network should be /112", p), "use a /112, e.g. fd02::/112")
	}
}

// family names an address family.
func family(is4 bool) string {
	if is4 {
		return "IPv4"
	}
	return "IPv6"
}

// familySet is the families present in a list and the family of its first entry.
type familySet struct {
	v4, v6  bool
	primary string
}

func familiesOf(list []namedPrefix) familySet {
	var f familySet
	for i, n := range list {
		if n.p.Addr().Is4() {
			f.v4 = true
		} else {
			f.v6 = true
		}
		if i == 0 {
			f.primary = family(n.p.Addr().Is4())
		}
	}
	return f
}

func (f familySet) String() string {
	switch {
	case f.v4 && f.v6:
		return "dual-stack"
	case f.v6:
		return "IPv6"
	}
	return "IPv4"
}

// families holds the three network lists to the installer's stack rules
// (validateNetworkingIPVersion): the service networks decide the stack; dual-stack takes exactly
// two service networks and both families in every list; single-stack IPv4 takes one service
// network. bootstrap adds what the installer leaves to a broken cluster: one service network per
// family for IPv6 too, and the same families in all three lists (an IPv6 machine network with
// an IPv4-only pod network installs, then nothing on the nodes can reach a pod).
func (c *checker) families(machine, cluster, service []namedPrefix) {
	if len(service) == 0 {
		return
	}
	sf := familiesOf(service)
	lists := []struct {
		name string
		list []namedPrefix
	}{{"machineNetwork", machine}, {"clusterNetwork", cluster}, {"serviceNetwork", service}}
	if sf.v4 && sf.v6 {
		if len(service) != 2 {
			c.err("cluster.networking.serviceNetwork", fmt.Sprintf("%d service networks: the installer says when installing dual-stack IPv4/IPv6 you must provide two service networks, one for each IP address type", len(service)),
				"list one IPv4 and one IPv6 service network, e.g. [172.30.0.0/16, fd02::/112]")
		}
		for _, l := range lists {
			f := familiesOf(l.list)
			if len(l.list) == 0 || (f.v4 && f.v6) {
				continue
			}
			missing := family(!f.v4)
			c.err("cluster.networking."+l.name, fmt.Sprintf("%s is %s only: the installer says dual-stack IPv4/IPv6 requires an %s network in this list", l.name, f, missing),
				fmt.Sprintf("add an %s entry (%s), or make the service network single-stack", missing, exampleFor(l.name, missing)))
		}
		return
	}
	if len(service) > 1 {
		msg := fmt.Sprintf("%d %s service networks: the installer says only one service network can be specified", len(service), sf)
		if sf.v6 {
			msg = fmt.Sprintf("%d IPv6 service networks: the cluster uses one service network per address family", len(service))
		}
		c.err(service[1].path, msg, "keep one service network per address family (two only for dual-stack: one IPv4, one IPv6)")
	}
	// The cluster network operator refuses pod and service networks of different families, and
	// a family the machine network lacks leaves the nodes without an address to serve it on.
	if f := familiesOf(cluster); len(cluster) > 0 && f.String() != sf.String() {
		c.err("cluster.networking.clusterNetwork", fmt.Sprintf("clusterNetwork is %s but the service network is %s: pod and service networks must hold the same address families", f, sf),
			fmt.Sprintf("use %s clusterNetwork entries (e.g. %s)", sf, exampleFor("clusterNetwork", sf.primary)))
	}
	if f := familiesOf(machine); len(machine) > 0 && ((sf.v4 && !f.v4) || (sf.v6 && !f.v6)) {
		c.err("cluster.networking.machineNetwork", fmt.Sprintf("machineNetwork is %s but the service network is %s: the nodes need a machine network of the cluster's family", f, sf),
			fmt.Sprintf("make the service and cluster networks %s (serviceNetwork %s, clusterNetwork %s), or add the nodes' %s subnet to machineNetwork",
				f.primary, exampleFor("serviceNetwork", f.primary), exampleFor("clusterNetwork", f.primary), sf))
	}
}

// exampleFor is a usual value for a network list in a family.
func exampleFor(list, fam string) string {
	switch {
	case list == "clusterNetwork" && fam == "IPv6":
		return "fd01::/48 with hostPrefix 64"
	case list == "clusterNetwork":
		return "10.128.0.0/14 with hostPrefix 23"
	case list == "serviceNetwork" && fam == "IPv6":
		return "fd02::/112"
	case list == "serviceNetwork":
		return "172.30.0.0/16"
	case fam == "IPv6":
		return "the site's IPv6 prefix, e.g. 2001:db8:0:10::/64"
	}
	return "the site's IPv4 subnet, e.g. 10.0.0.0/24"
}

// vipFamilies holds dual-stack VIPs to the installer's rule: the first VIP's family is the
// primary family of every network list ("<list> primary IP Family and primary IP family for the
// API VIP should match").
func (c *checker) vipFamilies(path, what string, vips []string, machine, cluster, service []namedPrefix) {
	if len(vips) == 0 {
		return
	}
	first, err := netip.ParseAddr(vips[0])
	if err != nil {
		return
	}
	sf := familiesOf(service)
	if !sf.v4 || !sf.v6 {
		return
	}
	vf := family(first.Is4())
	var wrong []string
	for _, l := range []struct {
		name string
		list []namedPrefix
	}{{"clusterNetwork", cluster}, {"machineNetwork", machine}, {"serviceNetwork", service}} {
		if f := familiesOf(l.list); len(l.list) > 0 && f.primary != vf {
			wrong = append(wrong, fmt.Sprintf("%s primary IP Family and primary IP family for the %s VIP should match", l.name, what))
		}
	}
	if len(wrong) == 0 {
		return
	}
	other := family(!first.Is4())
	c.err(path+"[0]", fmt.Sprintf("the first %s VIP %s is %s but the networks list %s first; the installer says %s", what, first, vf, other, strings.Join(wrong, "; ")),
		fmt.Sprintf("list the %s VIP first, as the networks do (or put the %s entries first in machineNetwork, clusterNetwork and serviceNetwork)", other, vf))
}
