package site

import (
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"strings"
)

// The rules below are the nmstate schema's (nmstatectl, which `openshift-install agent create
// image` runs on each host's networkConfig and the agent applies at boot); nmstatectl is not
// packaged for the jump host, so bootstrap checks them itself.

// bondModes are nmstate's link-aggregation modes.
var bondModes = []string{"balance-rr", "active-backup", "balance-xor", "broadcast", "802.3ad", "balance-tlb", "balance-alb"}

// bondOptionModes lists the bonding options nmstate knows, each with the modes it applies to
// (nil: any mode), following the kernel's per-option mode restrictions (bond_options.c) and
// NetworkManager's, which refuse the option in another mode.
var bondOptionModes = map[string][]string{
	"ad_actor_sys_prio": {"802.3ad"}, "ad_actor_system": {"802.3ad"}, "ad_select": {"802.3ad"},
	"ad_user_port_key": {"802.3ad"}, "lacp_rate": {"802.3ad"}, "lacp_active": {"802.3ad"},
	"arp_interval":      {"balance-rr", "active-backup", "balance-xor", "broadcast"},
	"arp_ip_target":     {"balance-rr", "active-backup", "balance-xor", "broadcast"},
	"arp_validate":      {"balance-rr", "active-backup", "balance-xor", "broadcast"},
	"packets_per_slave": {"balance-rr"}, "primary": {"active-backup", "balance-tlb", "balance-alb"},
	"tlb_dynamic_lb":    {"balance-tlb"},
	"all_slaves_active": nil, "arp_all_targets": nil, "arp_missed_max": nil, "downdelay": nil, "updelay": nil,
	"fail_over_mac": nil, "miimon": nil, "min_links": nil, "num_grat_arp": nil, "num_unsol_na": nil,
	"primary_reselect": nil, "resend_igmp": nil, "use_carrier": nil, "xmit_hash_policy": nil, "lp_interval": nil,
	"peer_notif_delay": nil, "ns_ip6_target": nil, "balance_slb": nil,
}

// bondModeNumbers are the kernel's numbers for the modes, which nmstate's schema does not take.
var bondModeNumbers = map[string]string{"0": "balance-rr", "1": "active-backup", "2": "balance-xor", "3": "broadcast", "4": "802.3ad", "5": "balance-tlb", "6": "balance-alb"}

var nmStates = []string{"up", "down", "absent", "ignore"}

// nmstateRules checks one node's nmstate document beyond the NIC names: types, states, VLAN ids,
// bonds, MTUs and routes.
func (c *checker) nmstateRules(base string, ifaces []nmIface, nics map[string]string, cfg map[string]any) {
	byName := map[string]*nmIface{}
	for i := range ifaces {
		byName[ifaces[i].name] = &ifaces[i]
	}
	portOf := map[string]string{} // port → bond that holds it
	for i := range ifaces {
		ifc := &ifaces[i]
		if _, known := NMStateTypes[ifc.typ]; ifc.typ != "" && !known {
			remedy := "use one of nmstate's types: " + strings.Join(sortedTypes(), ", ")
			if good, ok := nmTypeSpellings[ifc.typ]; ok {
				remedy = fmt.Sprintf("nmstate spells it %s: write `type: %s`", good, good)
			}
			c.err(ifc.path+".type", fmt.Sprintf("%q is not an nmstate interface type", ifc.typ), remedy)
		}
		if ifc.state != "" && !slices.Contains(nmStates, ifc.state) {
			c.err(ifc.path+".state", fmt.Sprintf("state %q is not an nmstate interface state", ifc.state), "use up, down, absent or ignore")
		}
		if ifc.typ == "vlan" {
			c.vlanRules(ifc, byName)
		}
		if ifc.typ == "bond" {
			c.bondRules(ifc, portOf)
		}
		c.mtuRule(ifc)
	}
	c.routeRules(base, cfg, byName, nics)
}

func sortedTypes() []string {
	out := make([]string, 0, len(NMStateTypes))
	for t := range NMStateTypes {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// intValue reads a YAML number; quoted numbers are refused like the installer refuses a quoted
// mtu ("mtu must be an integer (not quoted string)").
func intValue(v any) (int, bool) {
	n, ok := v.(int)
	return n, ok
}

func (c *checker) vlanRules(ifc *nmIface, byName map[string]*nmIface) {
	vl, ok := ifc.raw["vlan"].(map[string]any)
	if !ok {
		if ifc.state != "absent" {
			c.err(ifc.path, fmt.Sprintf("VLAN %s has no vlan section", ifc.name), "add `vlan: {base-iface: NIC_OR_BOND, id: 1-4094}`")
		}
		return
	}
	if _, set := vl["id"]; !set {
		c.err(ifc.path+".vlan", fmt.Sprintf("VLAN %s has no id", ifc.name), "add `id:` with the VLAN tag, 1 to 4094")
	} else if id, ok := intValue(vl["id"]); !ok || id < 1 || id > 4094 {
		c.err(ifc.path+".vlan.id", fmt.Sprintf("VLAN id %v is not a number from 1 to 4094", vl["id"]),
			"write the 802.1Q tag the switch port carries, unquoted, from 1 to 4094 (0 and 4095 are reserved)")
	}
	if str(vl["base-iface"]) == "" {
		c.err(ifc.path+".vlan", fmt.Sprintf("VLAN %s has no base-iface", ifc.name), "add `base-iface:` naming the NIC or bond the VLAN sits on")
	}
	// A VLAN cannot carry frames larger than its base interface does.
	if b := byName[str(vl["base-iface"])]; b != nil {
		vm, vok := intValue(ifc.raw["mtu"])
		bm, bok := intValue(b.raw["mtu"])
		if vok && bok && vm > bm {
			c.err(ifc.path+".mtu", fmt.Sprintf("mtu %d is larger than base interface %s's mtu %d", vm, b.name, bm),
				fmt.Sprintf("lower it to %d or less, or raise %s's mtu", bm, b.name))
		}
	}
}

func (c *checker) bondRules(ifc *nmIface, portOf map[string]string) {
	la, ok := ifc.raw["link-aggregation"].(map[string]any)
	if !ok {
		if ifc.state != "absent" {
			c.err(ifc.path, fmt.Sprintf("bond %s has no link-aggregation section", ifc.name), "add `link-aggregation: {mode: active-backup, port: [NIC1, NIC2]}`")
		}
		return
	}
	mode := str(la["mode"])
	switch {
	case mode == "":
		c.err(ifc.path+".link-aggregation", fmt.Sprintf("bond %s has no mode", ifc.name), "add `mode:` — one of "+strings.Join(bondModes, ", "))
	case bondModeNumbers[mode] != "":
		c.err(ifc.path+".link-aggregation.mode", fmt.Sprintf("bond mode %s is the kernel's number; nmstate takes the mode's name", mode),
			fmt.Sprintf("write `mode: %s`", bondModeNumbers[mode]))
		mode = ""
	case !slices.Contains(bondModes, mode):
		c.err(ifc.path+".link-aggregation.mode", fmt.Sprintf("%q is not a bond mode", mode), "use one of "+strings.Join(bondModes, ", "))
		mode = ""
	}
	if len(ifc.ports) == 0 && ifc.state != "absent" {
		c.err(ifc.path+".link-aggregation", fmt.Sprintf("bond %s has no ports: it would come up with no link", ifc.name), "list its NICs under `port:`")
	}
	for _, p := range ifc.ports {
		if other, dup := portOf[p]; dup {
			c.err(ifc.path+".link-aggregation", fmt.Sprintf("%s is already a port of bond %s", p, other), "give each NIC to one bond")
		}
		portOf[p] = ifc.name
	}
	opts, _ := la["options"].(map[string]any)
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		modes, known := bondOptionModes[k]
		path := ifc.path + ".link-aggregation.options." + k
		switch {
		case !known:
			c.err(path, fmt.Sprintf("%q is not a bonding option nmstate knows", k), "see the kernel's bonding options (miimon, lacp_rate, xmit_hash_policy, ...); nmstate spells them with '_'")
		case mode != "" && modes != nil && !slices.Contains(modes, mode):
			c.err(path, fmt.Sprintf("%s does not apply to bond mode %s (only %s): the kernel refuses it, and nmstate fails verifying the bond", k, mode, strings.Join(modes, ", ")),
				"remove it, or use a mode it applies to")
		}
	}
	mii, _ := intValue(opts["miimon"])
	arp, _ := intValue(opts["arp_interval"])
	if mii > 0 && arp > 0 {
		c.err(ifc.path+".link-aggregation.options", "miimon and arp_interval are both set: the kernel monitors links one way or the other", "keep one of them (miimon: 100 is usual)")
	}
}

// mtuRule holds an MTU to what the kernel takes: an unquoted integer, at least 68 (IPv4's
// minimum), at least 1280 where IPv6 is on, at most 65535 (a NIC's own limit, often 9216, is
// checked only when the host applies it).
func (c *checker) mtuRule(ifc *nmIface) {
	v, set := ifc.raw["mtu"]
	if !set {
		return
	}
	n, ok := intValue(v)
	switch {
	case !ok:
		c.err(ifc.path+".mtu", fmt.Sprintf("mtu %q is not a number: the installer says mtu must be an integer (not quoted string)", str(v)), "write it unquoted, e.g. `mtu: 9000`")
	case n < 68 || n > 65535:
		c.err(ifc.path+".mtu", fmt.Sprintf("mtu %d is outside 68 to 65535", n), "use 1500, or 9000 for jumbo frames where the switches carry them")
	case n < 1280 && ifc.raw["ipv6"] != nil && !ifc.disabled["ipv6"]:
		c.err(ifc.path+".mtu", fmt.Sprintf("mtu %d is below 1280, the IPv6 minimum, on an interface with IPv6 enabled", n), "raise it to 1280 or more, or disable ipv6 on it")
	}
}

// routeRules checks routes.config: a destination CIDR, a next hop of the destination's family,
// an interface that exists, and a next hop the interface can reach: inside one of its static
// subnets (unless the family is configured by DHCP or autoconf there, or the hop is link-local).
func (c *checker) routeRules(base string, cfg map[string]any, byName map[string]*nmIface, nics map[string]string) {
	routes, _ := cfg["routes"].(map[string]any)
	list, _ := routes["config"].([]any)
	for i, r := range list {
		rm, ok := r.(map[string]any)
		if !ok {
			continue
		}
		p := fmt.Sprintf("%s.routes.config[%d]", base, i)
		if str(rm["state"]) == "absent" {
			continue
		}
		dest, err := netip.ParsePrefix(str(rm["destination"]))
		if err != nil {
			c.err(p+".destination", fmt.Sprintf("%q is not a CIDR", str(rm["destination"])), "write the destination network, e.g. 0.0.0.0/0 for the default route")
			continue
		}
		hopText := str(rm["next-hop-address"])
		ifName := str(rm["next-hop-interface"])
		if ifName != "" {
			if _, nic := nics[ifName]; !nic && byName[ifName] == nil {
				c.err(p+".next-hop-interface", fmt.Sprintf("route interface %q is neither in interfaces[] nor defined in networkConfig", ifName),
					"name the interface (NIC, bond or VLAN) the route leaves by")
				continue
			}
		}
		if hopText == "" {
			continue
		}
		hop, err := netip.ParseAddr(hopText)
		if err != nil || hop.Zone() != "" {
			c.err(p+".next-hop-address", fmt.Sprintf("%q is not an IP address", hopText), "write the gateway's address, e.g. 10.0.0.1")
			continue
		}
		if hop.Is4() != dest.Addr().Is4() {
			c.err(p+".next-hop-address", fmt.Sprintf("next hop %s is %s but the destination %s is %s", hop, family(hop.Is4()), dest, family(dest.Addr().Is4())),
				"give an IPv4 route an IPv4 gateway and an IPv6 route an IPv6 one")
			continue
		}
		if hop.IsLinkLocalUnicast() || (ifName != "" && byName[ifName] == nil) {
			continue // on-link by definition, or a NIC configured elsewhere
		}
		fam := "ipv6"
		if hop.Is4() {
			fam = "ipv4"
		}
		// The interfaces the route may leave by: the one named, else any.
		var via []*nmIface
		if ifName != "" {
			via = []*nmIface{byName[ifName]}
		} else {
			for _, ifc := range byName {
				via = append(via, ifc)
			}
		}
		var subnets []string
		reachable, dynamic := false, false
		for _, ifc := range via {
			dynamic = dynamic || ifc.dynamic[fam]
			for _, a := range ifc.addrs {
				if a.addr.Is4() != hop.Is4() {
					continue
				}
				pre := netip.PrefixFrom(a.addr, a.prefix).Masked()
				subnets = append(subnets, pre.String())
				reachable = reachable || pre.Contains(hop)
			}
		}
		sort.Strings(subnets)
		if ifName == "" {
			ifName = "any interface"
		}
		switch {
		case reachable || dynamic: // DHCP or autoconf may bring the subnet
		case len(subnets) > 0:
			c.err(p+".next-hop-address", fmt.Sprintf("next hop %s is not in %s's subnet (%s): the route cannot be installed", hop, ifName, strings.Join(subnets, ", ")),
				fmt.Sprintf("use the gateway of %s, or route via the interface whose subnet holds %s", strings.Join(subnets, ", "), hop))
		case !dynamic:
			c.err(p+".next-hop-address", fmt.Sprintf("next hop %s cannot be reached: %s has no %s address (static, DHCP or autoconf)", hop, ifName, family(hop.Is4())),
				fmt.Sprintf("give %s an address in %s's subnet, or route via the interface that has one", ifName, hop))
		}
	}
}
