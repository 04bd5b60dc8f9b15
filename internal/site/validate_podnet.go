package site

import (
	"fmt"
	"net/netip"
)

// minPodBits is how many address bits each node's pod subnet keeps at least: 7, 128 addresses.
// The agent installer's AgentClusterInstall (pkg/asset/agent/manifests, validateIPAddressAndNetworkType
// for OVNKubernetes) refuses a larger hostPrefix ("must be at most 25" for IPv4), as the assisted
// service does (VerifyClusterCidrSize: "Host prefix, now 26, must be less than or equal to 25 to
// allow at least 128 addresses"). install-config validation alone lets it through: it is found
// only when `agent create image` derives the cluster manifests.
const minPodBits = 7

// maxHostPrefix is the largest hostPrefix the agent installer takes in p's family.
func maxHostPrefix(p netip.Prefix) int { return p.Addr().BitLen() - minPodBits }

// hostPrefixRoom checks that a cluster network gives each node room for its pods and has a node
// subnet for every node of the profile, as AgentClusterInstall does; it reports false when it
// found a problem.
//
// The installer needs 2^(hostPrefix - prefix length) >= the number of nodes; the assisted service
// running on the rendezvous host asks for room for at least 4 nodes when there is more than one
// ("The Cluster Network prefix is valid" validation), and the install waits on it. bootstrap holds
// to the second, which is the stricter.
func (c *checker) hostPrefixRoom(path string, p netip.Prefix, hostPrefix int) bool {
	if max := maxHostPrefix(p); hostPrefix > max {
		c.err(path+".hostPrefix", fmt.Sprintf("hostPrefix %d leaves each node fewer than 128 pod addresses: the installer says spec.networking.clusterNetwork.hostPrefix must be at most %d",
			hostPrefix, max), fmt.Sprintf("use `hostPrefix: %d` or less (23, the default, gives each node 512 pod addresses); widen %s if the nodes do not fit", max, p))
		return false
	}
	nodes := len(c.s.Nodes)
	need := nodes
	if nodes > 1 {
		need = max(4, nodes)
	}
	room := uint64(1) << min(63, hostPrefix-p.Bits())
	if nodes == 0 || uint64(need) <= room {
		return true
	}
	var bits int // the node-subnet bits `need` nodes take
	for uint64(1)<<bits < uint64(need) {
		bits++
	}
	remedy := fmt.Sprintf("widen the cluster network to /%d or wider (e.g. %s)", hostPrefix-bits, netip.PrefixFrom(p.Addr(), hostPrefix-bits).Masked())
	if p.Addr().Is4() && p.Bits()+bits <= maxHostPrefix(p) {
		remedy += fmt.Sprintf(", or raise hostPrefix to %d (fewer pod addresses per node)", p.Bits()+bits)
	}
	c.err(path+".cidr", fmt.Sprintf("%s with hostPrefix %d has room for %d node subnets and the profile has %d nodes: the installer says prefix length %d not large enough to accommodate %d hosts with hostPrefix length %d",
		p, hostPrefix, room, nodes, p.Bits(), nodes, hostPrefix), remedy+"; the assisted service wants room for at least 4 nodes in a multi-node cluster")
	return false
}
