package agentiso

import (
	"strings"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/finding"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

func TestValidateProfilesClean(t *testing.T) {
	for _, name := range profiles {
		s := loadProfile(t, name)
		if err := Invalid(Validate(s)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// netIfaces returns node i's networkConfig interfaces list for editing.
func netIfaces(s *site.Site, i int) []any {
	return s.Nodes[i].NetworkConfig["interfaces"].([]any)
}

func TestValidateRules(t *testing.T) {
	cases := []struct {
		name    string
		profile string
		edit    func(s *site.Site)
		sev     finding.Status
		field   string
		node    string
		message string
	}{
		{"duplicate MAC", "lab", func(s *site.Site) { s.Nodes[3].Interfaces[0].MACAddress = "52:54:00:00:00:10" },
			finding.Fail, "nodes[3].interfaces[0].macAddress", "worker-0", "also listed at nodes[0] (master-0)"},
		{"duplicate MAC differing case", "dell-xe7740-h200", func(s *site.Site) { s.Nodes[4].Interfaces[0].MACAddress = "C4:CB:E1:20:00:01" },
			finding.Fail, "nodes[4].interfaces[0].macAddress", "xe7740-2", "also listed at nodes[3]"},
		{"bad MAC", "lab", func(s *site.Site) { s.Nodes[0].Interfaces[0].MACAddress = "52:54:00:00:10" },
			finding.Fail, "nodes[0].interfaces[0].macAddress", "master-0", "not a MAC address"},
		{"boot MAC not in interfaces", "lab", func(s *site.Site) { s.Nodes[1].BootMAC = "52:54:00:00:00:99" },
			finding.Fail, "nodes[1].bootMAC", "master-1", "not among the node's interfaces"},
		{"ethernet name not in interfaces", "lab", func(s *site.Site) {
			netIfaces(s, 2)[0].(map[string]any)["name"] = "enp2s0"
		}, finding.Fail, "nodes[2].networkConfig.interfaces[0].name", "master-2", `NIC "enp2s0" is not in interfaces[]`},
		{"bond port typo", "dell-xe7740-h200", func(s *site.Site) {
			la := netIfaces(s, 0)[2].(map[string]any)["link-aggregation"].(map[string]any)
			la["port"] = []any{"eno12399np0", "eno12409np2"}
		}, finding.Fail, "nodes[0].networkConfig.interfaces[2].link-aggregation.port[1]", "r660-1", `bond port "eno12409np2"`},
		{"vlan base typo", "dell-xe7740-h200", func(s *site.Site) {
			netIfaces(s, 1)[3].(map[string]any)["vlan"] = map[string]any{"base-iface": "bond1", "id": 410}
		}, finding.Fail, "nodes[1].networkConfig.interfaces[3].vlan.base-iface", "r660-2", `VLAN base interface "bond1"`},
		{"route interface typo", "sno", func(s *site.Site) {
			s.Nodes[0].NetworkConfig["routes"] = map[string]any{"config": []any{map[string]any{"next-hop-interface": "eth0"}}}
		}, finding.Fail, "nodes[0].networkConfig.routes.config[0].next-hop-interface", "sno-0", `route interface "eth0"`},
		{"rendezvous on a worker", "lab", func(s *site.Site) { s.Cluster.RendezvousIP = "192.168.111.30" },
			finding.Fail, "cluster.rendezvousIP", "worker-0", "must be a control-plane node"},
		{"rendezvous unknown", "lab", func(s *site.Site) { s.Cluster.RendezvousIP = "192.168.111.99" },
			finding.Fail, "cluster.rendezvousIP", "", "not the static address of any control-plane node"},
		{"rendezvous with DHCP", "lab", func(s *site.Site) {
			for i := range s.Nodes {
				s.Nodes[i].NetworkConfig = nil
			}
		}, finding.Warn, "cluster.rendezvousIP", "", "reserve it for that node's boot MAC"},
		{"rendezvous missing", "lab", func(s *site.Site) { s.Cluster.RendezvousIP = "" }, finding.Fail, "cluster.rendezvousIP", "", "no rendezvousIP"},
		{"kernel device name", "lab", func(s *site.Site) { s.Nodes[0].RootDevice = "/dev/sda" },
			finding.Fail, "nodes[0].rootDevice", "master-0", "not a stable name"},
		{"by-id rejected by the installer", "lab", func(s *site.Site) { s.Nodes[1].RootDevice = "/dev/disk/by-id/wwn-0x5000c500a0b1c2d3" },
			finding.Fail, "nodes[1].rootDevice", "master-1", "by-id names are rejected"},
		{"RHEL 8 ata path on 4.16", "dell-xe7740-h200", func(s *site.Site) {}, finding.Warn, "nodes[3].rootDevice", "xe7740-1", "RHEL 8 by-path form"},
		{"RHEL 9 ata path on 4.12", "compact-3node", func(s *site.Site) { s.Cluster.Release.Version = "4.12.40" },
			finding.Warn, "nodes[0].rootDevice", "ctl-1", "boots a RHEL 8 kernel"},
		{"single node with VIPs", "sno", func(s *site.Site) {
			s.Cluster.APIVIPs = []string{"192.168.50.5"}
			s.Cluster.IngressVIPs = []string{"192.168.50.6"}
		},
			finding.Fail, "cluster.apiVIPs", "", "platform none"},
		{"two masters", "lab", func(s *site.Site) { s.Nodes[2].Role = site.RoleWorker }, finding.Fail, "nodes", "", "2 master nodes"},
		{"duplicate hostname", "lab", func(s *site.Site) { s.Nodes[4].Name = "worker-0" }, finding.Fail, "nodes[4].name", "worker-0", "already used by nodes[3]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := loadProfile(t, c.profile)
			c.edit(s)
			var found bool
			ps := Validate(s)
			for _, p := range ps {
				if p.Status == c.sev && p.Path == c.field && p.Node == c.node && strings.Contains(p.Message, c.message) {
					found = true
				}
			}
			if !found {
				t.Errorf("want %s at %s (node %q) containing %q; got:\n%v", c.sev, c.field, c.node, c.message, ps)
			}
			if c.sev == finding.Fail {
				var ve *ValidationError
				if err := Invalid(ps); err == nil || !asValidation(err, &ve) {
					t.Errorf("Err() = %v, want a *ValidationError", err)
				}
			}
		})
	}
}

func asValidation(err error, ve **ValidationError) bool {
	v, ok := err.(*ValidationError)
	*ve = v
	return ok
}

func TestInstallerVersion(t *testing.T) {
	v, err := InstallerVersion("openshift-install 4.16.3\nbuilt from commit abc\nrelease image quay.io/x@sha256:00\n")
	if err != nil || v != "4.16.3" {
		t.Fatalf("got %q, %v", v, err)
	}
	if _, err := InstallerVersion("garbage"); err == nil {
		t.Error("no error for output without version")
	}
	if err := CheckInstallerVersion("4.16.3", "4.16.3"); err != nil {
		t.Error(err)
	}
	if err := CheckInstallerVersion("4.17.1", "4.16.3"); err == nil || !strings.Contains(err.Error(), "version 4.16.3 but cluster.release.version is 4.17.1") {
		t.Errorf("mismatch: %v", err)
	}
}
