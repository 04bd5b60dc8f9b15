package site

import (
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// ipOwner says which node holds a static address and where it is written.
type ipOwner struct {
	node string
	role string
	path string
}

var (
	macRE    = regexp.MustCompile(`^[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){5}$`)
	ifnameRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,15}$`)
	// RHEL 8 (RHCOS ≤ 4.12) names SATA by-path links "...-ata-N"; RHEL 9 (RHCOS 4.13+) adds
	// "...-ata-N.0" and keeps the old one only as a compatibility link.
	ataOldRE = regexp.MustCompile(`-ata-\d+$`)
	ataNewRE = regexp.MustCompile(`-ata-\d+\.\d+$`)
	partRE   = regexp.MustCompile(`-part\d+$`)
	sdRE     = regexp.MustCompile(`^/dev/(sd[a-z]+|nvme\d+n\d+|vd[a-z]+|hd[a-z]+)$`)
)

// nodes checks every node and gathers their static addresses into c.nodeIPs.
func (c *checker) nodes() {
	s := c.s
	c.nodeIPs = map[string]ipOwner{}
	c.nodeAddrs = map[int][]nmAddr{}
	names := map[string]string{} // name → path of first use
	macs := map[string]string{}
	bmcs := map[string]string{}
	for i := range s.Nodes {
		n := &s.Nodes[i]
		p := fmt.Sprintf("nodes[%d]", i)
		if n.Name != "" {
			if why := hostnameProblem(n.Name); why != "" {
				c.err(p+".name", fmt.Sprintf("%q is not a valid host name: %s", n.Name, why), domainRemedy(n.Name, "gpu-0 or gpu-0.site.example.com"))
			} else if first, dup := names[n.Name]; dup {
				c.err(p+".name", fmt.Sprintf("node name %q is already used by %s", n.Name, first), "give every node its own name")
			} else {
				names[n.Name] = p
			}
		}
		if n.Role != "" && n.Role != RoleMaster && n.Role != RoleWorker {
			c.err(p+".role", fmt.Sprintf("role %q is not master or worker%s", n.Role, didYouMean(n.Role, RoleMaster, RoleWorker)),
				"use `role: master` (control plane) or `role: worker`")
		}
		c.bmc(p+".bmc", n.BMC, bmcs)
		c.interfaces(p, n, macs)
		c.rootDevice(p+".rootDevice", n.RootDevice)
		c.networkConfig(i, p, n)
		for j, a := range n.ISO.KernelArgs {
			if strings.ContainsAny(a, " \t\n") || a == "" {
				c.err(fmt.Sprintf("%s.iso.kernelArgs[%d]", p, j), "a kernel argument must be one word", "write each argument as its own list item")
			}
		}
	}
	c.topology()
}

// bmcPathRE is the path a bmc.address may carry: none, or the node's own System on a service
// that manages several (the Metal3/Ironic address scheme); the bmc package parses the same.
var bmcPathRE = regexp.MustCompile(`^(|/redfish/v1|/redfish/v1/Systems/[^/]+)$`)

func (c *checker) bmc(p string, b BMC, seen map[string]string) {
	if b.Address != "" && !c.userinfo(p+".address", b.Address) {
		u, err := url.Parse(b.Address)
		switch {
		case err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http"):
			c.err(p+".address", fmt.Sprintf("%q is not a Redfish URL", shownURL(b.Address)),
				"write the BMC endpoint as https://HOST or https://HOST:PORT (the iDRAC address)")
		case !bmcPathRE.MatchString(strings.TrimRight(u.EscapedPath(), "/")):
			c.err(p+".address", fmt.Sprintf("%q: the path %q names no Redfish System", b.Address, u.Path),
				"write https://HOST[:PORT], or on a BMC that manages several systems https://HOST[:PORT]/redfish/v1/Systems/<id>")
		default:
			if u.Scheme == "http" {
				c.warn(p+".address", "the BMC is reached over plain HTTP: its password crosses the network in clear",
					"use https:// (iDRAC9 serves Redfish on HTTPS only by default)")
			}
			key := strings.ToLower(u.Host + u.Path)
			if first, dup := seen[key]; dup {
				c.err(p+".address", fmt.Sprintf("BMC %s is already used by %s", b.Address, first),
					"every node has its own BMC; check the address")
			} else {
				seen[key] = p
			}
		}
	}
	if b.Vendor != "" && b.Vendor != "dell" && b.Vendor != "generic" {
		c.err(p+".vendor", fmt.Sprintf("vendor %q is not supported%s", b.Vendor, didYouMean(b.Vendor, "dell", "generic")),
			"use dell (iDRAC9) or generic (plain Redfish)")
	}
	c.secretRef(p+".password", b.Password)
	if b.Insecure {
		c.warn(p+".insecure", "TLS verification of this BMC is off: anyone on the path can read its password",
			"install the iDRAC's certificate chain and set caFile instead")
		if b.CAFile != "" {
			c.warn(p+".caFile", "caFile is ignored because insecure is true", "remove insecure: true")
		}
	}
}

func (c *checker) interfaces(p string, n *Node, macs map[string]string) {
	local := map[string]bool{}
	names := map[string]bool{}
	for j, ifc := range n.Interfaces {
		ip := fmt.Sprintf("%s.interfaces[%d]", p, j)
		if ifc.Name != "" {
			if !ifnameRE.MatchString(ifc.Name) {
				c.err(ip+".name", fmt.Sprintf("%q is not a Linux interface name", ifc.Name), "use the kernel name, at most 15 characters, e.g. ens1f0np0")
			} else if names[ifc.Name] {
				c.err(ip+".name", fmt.Sprintf("interface %q is listed twice", ifc.Name), "list each NIC once")
			}
			names[ifc.Name] = true
		}
		if ifc.MACAddress == "" {
			continue
		}
		if !macRE.MatchString(ifc.MACAddress) {
			c.err(ip+".macAddress", fmt.Sprintf("%q is not a MAC address", ifc.MACAddress),
				"write six hex pairs separated by ':', e.g. b4:96:91:aa:bb:01 (quote it in YAML)")
			continue
		}
		if b, _ := strconv.ParseUint(ifc.MACAddress[:2], 16, 8); b&1 == 1 {
			// openshift-install (validate.MAC) takes unicast EUI-48 addresses only.
			c.err(ip+".macAddress", fmt.Sprintf("%s is a multicast address: the installer says expected unicast mac address, found multicast", ifc.MACAddress),
				"copy the NIC's own MAC from iDRAC → System → Network Devices (the first byte of a NIC's MAC is even)")
		}
		mac := normalizeMAC(ifc.MACAddress)
		local[mac] = true
		if first, dup := macs[mac]; dup {
			c.err(ip+".macAddress", fmt.Sprintf("MAC %s is already used by %s", ifc.MACAddress, first),
				"check the MAC in iDRAC → System → Network Devices")
		} else {
			macs[mac] = ip
		}
	}
	if n.BootMAC == "" {
		return
	}
	if !macRE.MatchString(n.BootMAC) {
		c.err(p+".bootMAC", fmt.Sprintf("%q is not a MAC address", n.BootMAC), "write six hex pairs separated by ':', e.g. b4:96:91:aa:bb:01")
	} else if !local[normalizeMAC(n.BootMAC)] {
		c.err(p+".bootMAC", fmt.Sprintf("boot MAC %s is not among this node's interfaces", n.BootMAC),
			"add the boot NIC to interfaces[] with its name, or correct bootMAC")
	}
}

// forbiddenHostnames are the names the assisted service refuses for a host.
var forbiddenHostnames = map[string]bool{
	"localhost": true, "localhost.localdomain": true, "localhost4": true,
	"localhost4.localdomain4": true, "localhost6": true, "localhost6.localdomain6": true,
}

// hostnameProblem says why a node name cannot be a host's name; "" when it can. The name is
// agent-config's hosts[].hostname, which the installer passes on unchecked and the assisted
// service holds to a lowercase RFC 1123 name of at most 253 characters (a short name or a
// fully qualified one), localhost excepted. The host, and so its Kubernetes Node, is named
// exactly that: gpu-0.gpu05.ai.example.com stays gpu-0.gpu05.ai.example.com, not gpu-0.
func hostnameProblem(name string) string {
	if why := subdomainProblem(name); why != "" {
		return why
	}
	if forbiddenHostnames[name] {
		return "the assisted service refuses localhost names"
	}
	return ""
}

// byPathRemedy says how to find a disk's by-path name and which form to pick.
const byPathRemedy = "use the disk's /dev/disk/by-path/... name (`ls -l /dev/disk/by-path/` on the node shows the link to the same disk); " +
	"for SATA/AHCI disks mind the kernel: RHCOS 4.13+ (RHEL 9) names them ...-ata-N.0, older releases (RHEL 8) ...-ata-N"

func (c *checker) rootDevice(p, dev string) {
	switch {
	case dev == "":
		return
	case sdRE.MatchString(dev):
		c.err(p, fmt.Sprintf("%s is a kernel name that changes between boots on Dell servers (RHEL 9 probes disks in parallel)", dev),
			"use its /dev/disk/by-path name (run `ls -l /dev/disk/by-path/` on the node, or see the slot in iDRAC → Storage)")
		return
	case strings.HasPrefix(dev, "/dev/disk/by-id/"):
		// openshift-install (pkg/types/baremetal/validation, 4.16+) accepts rootDeviceHints.deviceName
		// only directly under /dev/ or under /dev/disk/by-path/; a by-id name fails `agent create image`.
		c.err(p, fmt.Sprintf("%s is a /dev/disk/by-id name, which openshift-install rejects (rootDeviceHints.deviceName must be under /dev/disk/by-path/)", dev),
			byPathRemedy)
		return
	case !strings.HasPrefix(dev, "/dev/disk/by-path/"):
		c.err(p, fmt.Sprintf("%s is not under /dev/disk/by-path", dev), byPathRemedy)
		return
	case dev == "/dev/disk/by-path/":
		c.err(p, fmt.Sprintf("%s is the by-path directory, not a disk", dev), byPathRemedy)
		return
	case byPathSubdir(dev):
		// openshift-install (ValidateHostRootDeviceHints): the name below /dev/disk/by-path/ may hold no '/'.
		c.err(p, fmt.Sprintf("%s has a '/' after /dev/disk/by-path/: the installer says Device Name of root device hint must be path in /dev/ or /dev/disk/by-path/", dev),
			byPathFix(dev))
		return
	case partRE.MatchString(dev):
		c.err(p, fmt.Sprintf("%s names a partition; the root device is a whole disk", dev), "drop the -partN suffix")
		return
	}
	minor, ok := c.s.releaseMinor()
	if strings.HasPrefix(dev, "/dev/disk/by-path/") && ataOldRE.MatchString(dev) && (!ok || minor >= 13) {
		c.warn(p, "an -ata-N by-path name is the RHEL 8 form; RHCOS 4.13+ (RHEL 9) names this disk -ata-N.0 and keeps -ata-N only as a compatibility link",
			fmt.Sprintf("use %s.0, the name the agent's disk inventory reports", dev))
	}
	if ok && minor < 13 && ataNewRE.MatchString(dev) {
		c.warn(p, "an -ata-N.0 by-path name exists only on RHEL 9; RHCOS before 4.13 (RHEL 8) names this disk -ata-N",
			"drop the .0 suffix for this release")
	}
}

// networkConfig checks the nmstate document against interfaces[] and records static addresses.
func (c *checker) networkConfig(idx int, p string, n *Node) {
	if n.NetworkConfig == nil {
		return
	}
	base := p + ".networkConfig"
	ifaces := c.parseNMState(n.NetworkConfig, base)
	nics := map[string]string{} // name → mac from interfaces[]
	for _, ifc := range n.Interfaces {
		nics[ifc.Name] = normalizeMAC(ifc.MACAddress)
	}
	defined := map[string]bool{}
	for _, ifc := range ifaces {
		defined[ifc.name] = true
	}
	for _, ifc := range ifaces {
		if ifc.name != "" && NMStateNeedsNIC(ifc.typ) {
			mac, ok := nics[ifc.name]
			switch {
			case !ok:
				c.err(ifc.path+".name", fmt.Sprintf("interface %q is configured in networkConfig but missing from interfaces[]", ifc.name),
					fmt.Sprintf("add `- name: %s` with its macAddress to nodes[].interfaces (the agent maps names to NICs by MAC)", ifc.name))
			case ifc.mac != "" && normalizeMAC(ifc.mac) != mac:
				c.err(ifc.path+".mac-address", fmt.Sprintf("mac-address %s differs from interfaces[] (%s)", ifc.mac, mac), "make the two agree")
			}
		}
		for _, port := range ifc.ports {
			if _, ok := nics[port]; !ok && !defined[port] {
				c.err(ifc.path, fmt.Sprintf("%s port %q is neither in interfaces[] nor defined in networkConfig", ifc.name, port),
					fmt.Sprintf("add `- name: %s` with its macAddress to nodes[].interfaces", port))
			}
		}
		if ifc.base != "" {
			if _, ok := nics[ifc.base]; !ok && !defined[ifc.base] {
				c.err(ifc.path+".vlan.base-iface", fmt.Sprintf("VLAN base interface %q is neither in interfaces[] nor defined in networkConfig", ifc.base),
					"define the bond or NIC the VLAN sits on")
			}
		}
		if ifc.state == "absent" {
			continue // removed: carries no address
		}
		for _, a := range ifc.addrs {
			c.nodeAddrs[idx] = append(c.nodeAddrs[idx], a)
			key := a.addr.String()
			if first, dup := c.nodeIPs[key]; dup {
				c.err(a.path, fmt.Sprintf("address %s is already used by node %q (%s)", key, first.node, first.path), "give every node its own address")
				continue
			}
			c.nodeIPs[key] = ipOwner{node: n.Name, role: n.Role, path: a.path}
		}
	}
	c.nmstateRules(base, ifaces, nics, n.NetworkConfig)
}
