package site

import (
	"fmt"
	"net/netip"
	"strings"
)

// nmIface is the part of one nmstate interface that validation needs.
type nmIface struct {
	path  string // field path of the interface entry
	name  string
	typ   string // ethernet, bond, vlan, ... ("" is taken as ethernet)
	state string
	mac   string
	ports []string // bond ports or bridge ports
	base  string   // vlan base-iface
	addrs []nmAddr
	raw   map[string]any
	// dynamic[fam] is true when the family gets addresses from DHCP or autoconf.
	dynamic map[string]bool
	// disabled[fam] is true when the family is written with enabled: false.
	disabled map[string]bool
}

// nmAddr is one static address.
type nmAddr struct {
	path   string
	addr   netip.Addr
	prefix int
}

// NMStateTypes is the one table of nmstate interface types bootstrap knows (the `type` values
// of the nmstate 2.x schema, as nmstatectl on RHCOS reads them), each marked with whether it
// names a NIC of the host. A NIC type (ethernet, infiniband) is matched to nodes[].interfaces by
// name, since the agent maps names to NICs through their MACs; every other type is a device
// nmstate creates (or, for loopback, one that always exists) and needs no entry there.
var NMStateTypes = map[string]bool{
	"ethernet": true, "infiniband": true,
	"bond": false, "vlan": false, "linux-bridge": false, "ovs-bridge": false, "ovs-interface": false,
	"vxlan": false, "mac-vlan": false, "mac-vtap": false, "vrf": false, "dummy": false, "loopback": false,
	"team": false, "veth": false, "ipvlan": false, "macsec": false, "hsr": false, "xfrm": false, "ipsec": false,
}

// NMStateNeedsNIC reports whether an nmstate interface type names a NIC that must be listed
// in nodes[].interfaces ("" is ethernet, as in nmstate). Unknown types report false.
func NMStateNeedsNIC(typ string) bool {
	if typ == "" {
		typ = "ethernet"
	}
	return NMStateTypes[typ]
}

// nmTypeSpellings are spellings seen in the field (other tools, older docs) and nmstate's own.
var nmTypeSpellings = map[string]string{
	"macvlan": "mac-vlan", "macvtap": "mac-vtap", "bridge": "linux-bridge", "linux_bridge": "linux-bridge",
	"ovs_bridge": "ovs-bridge", "ovs-port": "ovs-interface", "eth": "ethernet", "bonding": "bond", "ip-vlan": "ipvlan",
}

// parseNMState reads networkConfig.interfaces. Malformed entries are reported on c.
func (c *checker) parseNMState(cfg map[string]any, base string) []nmIface {
	raw, ok := cfg["interfaces"]
	if !ok {
		return nil
	}
	list, ok := raw.([]any)
	if !ok {
		c.err(base+".interfaces", "nmstate interfaces must be a list", "write `interfaces:` followed by `- name: ...` entries")
		return nil
	}
	var out []nmIface
	for i, item := range list {
		p := fmt.Sprintf("%s.interfaces[%d]", base, i)
		m, ok := item.(map[string]any)
		if !ok {
			c.err(p, "an nmstate interface must be a mapping", "write `- name: eno1` with `type:` and `state:` below it")
			continue
		}
		ifc := nmIface{path: p, name: str(m["name"]), typ: str(m["type"]), state: str(m["state"]), mac: str(m["mac-address"]),
			raw: m, dynamic: map[string]bool{}, disabled: map[string]bool{}}
		if ifc.name == "" {
			c.err(p+".name", "nmstate interface has no name", "add `name:` (the kernel interface name, e.g. ens1f0np0)")
		}
		if la, ok := m["link-aggregation"].(map[string]any); ok {
			key := "port"
			if _, old := la["slaves"]; old {
				key = "slaves" // nmstate < 2.0 spelling
			}
			ifc.ports = strList(la[key])
		}
		if br, ok := m["bridge"].(map[string]any); ok {
			if ps, ok := br["port"].([]any); ok {
				for _, pe := range ps {
					if pm, ok := pe.(map[string]any); ok {
						ifc.ports = append(ifc.ports, str(pm["name"]))
					}
				}
			}
		}
		if vl, ok := m["vlan"].(map[string]any); ok {
			ifc.base = str(vl["base-iface"])
		}
		for _, fam := range []string{"ipv4", "ipv6"} {
			ifc.addrs = append(ifc.addrs, c.nmAddrs(m[fam], p+"."+fam, fam)...)
			if fm, ok := m[fam].(map[string]any); ok {
				ifc.dynamic[fam] = fm["dhcp"] == true || fm["autoconf"] == true
				ifc.disabled[fam] = fm["enabled"] == false
			}
		}
		out = append(out, ifc)
	}
	return out
}

func (c *checker) nmAddrs(v any, path, fam string) []nmAddr {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	if en, ok := m["enabled"].(bool); ok && !en {
		return nil
	}
	list, _ := m["address"].([]any)
	var out []nmAddr
	for j, a := range list {
		am, ok := a.(map[string]any)
		if !ok {
			continue
		}
		p := fmt.Sprintf("%s.address[%d]", path, j)
		ipText := str(am["ip"])
		addr, err := netip.ParseAddr(ipText)
		if err != nil || addr.Zone() != "" {
			c.err(p+".ip", fmt.Sprintf("%q is not an IP address", ipText), "write the address alone, e.g. 10.0.0.11, and its prefix in prefix-length")
			continue
		}
		if (fam == "ipv4") != addr.Is4() {
			c.err(p+".ip", fmt.Sprintf("%s is not an %s address", addr, fam), "move it under the matching ipv4/ipv6 section")
			continue
		}
		pl, ok := am["prefix-length"].(int)
		if !ok || pl < 1 || pl > addr.BitLen() {
			c.err(p+".prefix-length", fmt.Sprintf("prefix-length must be a number from 1 to %d", addr.BitLen()), "write e.g. `prefix-length: 24`")
			continue
		}
		out = append(out, nmAddr{path: p + ".ip", addr: addr, prefix: pl})
	}
	return out
}

func str(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case nil:
		return ""
	}
	return fmt.Sprint(v)
}

func strList(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, x := range list {
		out = append(out, str(x))
	}
	return out
}

// StaticAddresses returns the static IP addresses a node's networkConfig gives it, in order.
func (n Node) StaticAddresses() []netip.Addr {
	c := &checker{s: &Site{}}
	var out []netip.Addr
	for _, ifc := range c.parseNMState(n.NetworkConfig, "") {
		for _, a := range ifc.addrs {
			out = append(out, a.addr)
		}
	}
	return out
}

// normalizeMAC lower-cases a MAC for comparison.
func normalizeMAC(s string) string { return strings.ToLower(s) }
