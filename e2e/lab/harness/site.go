package harness

import (
	"fmt"
	"net"
	"strconv"

	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// Lab cluster identity.
const (
	ClusterName = "lab"
	BaseDomain  = "bootstrap.test" // .test is reserved (RFC 2606): it can never leak to real DNS
)

// labNode describes one simulated server; host is its address's last byte in the lab /24.
type labNode struct {
	name string
	role string
	gpu  bool
	host byte
}

var labNodes = []labNode{
	{"master-0", site.RoleMaster, false, 21},
	{"master-1", site.RoleMaster, false, 22},
	{"master-2", site.RoleMaster, false, 23},
	{"gpu-0", site.RoleWorker, true, 31},
	{"gpu-1", site.RoleWorker, true, 32},
}

// baseSite is the lab's profile before components contribute: the cluster and its nodes, shaped
// like a Dell GPU site (3 control-plane nodes, 2 GPU workers, by-path root disks).
func baseSite(l *Lab, isoPort int) *site.Site {
	s := &site.Site{
		APIVersion: site.APIVersion,
		Kind:       site.Kind,
		Metadata:   site.Metadata{Name: "lab", Description: "local lab on loopback (go run ./e2e/lab)"},
		Cluster: site.Cluster{
			Name:       ClusterName,
			BaseDomain: BaseDomain,
			Release:    site.Release{Version: "4.18.0", Architecture: "amd64"},
			Networking: site.Networking{
				NetworkType:    "OVNKubernetes",
				MachineNetwork: []string{l.Net.String()},
				ClusterNetwork: []site.ClusterNetwork{{CIDR: "10.128.0.0/14", HostPrefix: 23}},
				ServiceNetwork: []string{"172.30.0.0/16"},
			},
			APIVIPs:      []string{l.IP(5).String()},
			IngressVIPs:  []string{l.IP(7).String()},
			RendezvousIP: l.IP(21).String(),
		},
		ISO: site.ISO{ServeAddress: net.JoinHostPort(l.IP(1).String(), strconv.Itoa(isoPort))},
		// The simulated iDRACs power on in about a second, so a resumed run need not watch a node
		// whose power action may have been sent for the 3 minutes real servers get.
		Boot: site.Boot{ResumeGrace: "10s", ConfirmTimeout: "2m"},
		// Where the registry and Git stand-ins of later issues listen; until they land these
		// addresses answer nothing and the stages that use them fail saying so.
		Registry: site.Registry{Host: l.IP(60).String() + ":8443", Namespace: "ocp4"},
		Mirror:   site.Mirror{Source: site.MirrorSource{Registry: l.IP(61).String() + ":5000"}},
		GitOps: site.GitOps{Channel: "latest", RepoURL: "https://" + l.IP(70).String() + ":3000/lab/cluster-config.git",
			Revision: "main", Path: GitOpsPath, RootApp: site.RootApp{Name: "root", Namespace: "openshift-gitops"}},
	}
	for i, n := range labNodes {
		mac := fmt.Sprintf("52:54:00:00:%02x:%02x", n.host, 1)
		s.Nodes = append(s.Nodes, site.Node{
			Name:    n.name,
			Role:    n.role,
			GPU:     n.gpu,
			BootMAC: mac,
			BMC: site.BMC{
				// The Redfish simulators (a later issue) listen here.
				Address:  fmt.Sprintf("https://%s:8443", l.IP(byte(100+i))),
				Username: "root",
				Password: site.SecretRef{File: "secrets/bmc-password"},
			},
			Interfaces: []site.Interface{{Name: "eno1", MACAddress: mac}},
			RootDevice: "/dev/disk/by-path/pci-0000:00:11.5-ata-1.0",
			NetworkConfig: map[string]any{
				"interfaces": []any{map[string]any{
					"name": "eno1", "type": "ethernet", "state": "up", "mac-address": mac,
					"ipv4": map[string]any{"enabled": true, "dhcp": false, "address": []any{
						map[string]any{"ip": l.IP(n.host).String(), "prefix-length": 24}}},
				}},
				"routes": map[string]any{"config": []any{map[string]any{
					"destination": "0.0.0.0/0", "next-hop-address": l.IP(1).String(), "next-hop-interface": "eno1"}}},
			},
		})
	}
	return s
}
