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
	mac   string
	ports []string // bond ports or bridge ports
	base  string   // vlan base-iface
	addrs []nmAddr
}

// nmAddr is one static address.
type nmAddr struct {
	path   string
	addr   netip.Addr
	prefix int
}

// virtualTypes are nmstate interface types that need no NIC of their own.
var virtualTypes = map[string]bool{
	"bond": true, "vlan": true, "linux-bridge": true, "ovs-bridge": true, "ovs-interface": true,
	"dummy": true, "loopback": true, "vrf": true, "macvlan": true, "vxlan": true, "team": true,
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
		ifc := nmIface{path: p, name: str(m["name"]), typ: str(m["type"]), mac: str(m["mac-address"])}
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
