package site

import (
	"reflect"
	"testing"
)

func TestSetDefaults(t *testing.T) {
	tests := []struct {
		name  string
		site  Site
		check func(t *testing.T, s *Site)
	}{
		{
			name: "IPv6 machine network: IPv6 pod and service networks",
			site: Site{Cluster: Cluster{Networking: Networking{MachineNetwork: []string{"fd00:30::/64"}}}},
			check: func(t *testing.T, s *Site) {
				nw := s.Cluster.Networking
				if !reflect.DeepEqual(nw.ClusterNetwork, []ClusterNetwork{{CIDR: "fd01::/48", HostPrefix: 64}}) || !reflect.DeepEqual(nw.ServiceNetwork, []string{"fd02::/112"}) {
					t.Errorf("networking = %+v", nw)
				}
			},
		},
		{
			name: "dual-stack machine network, IPv6 first: both families in that order",
			site: Site{Cluster: Cluster{Networking: Networking{MachineNetwork: []string{"fd00:30::/64", "10.30.0.0/24", "10.31.0.0/24"},
				ServiceNetwork: []string{"fd02::/112", "172.30.0.0/16"}}}},
			check: func(t *testing.T, s *Site) {
				nw := s.Cluster.Networking
				want := []ClusterNetwork{{CIDR: "fd01::/48", HostPrefix: 64}, {CIDR: "10.128.0.0/14", HostPrefix: 23}}
				if !reflect.DeepEqual(nw.ClusterNetwork, want) || !reflect.DeepEqual(nw.ServiceNetwork, []string{"fd02::/112", "172.30.0.0/16"}) {
					t.Errorf("networking = %+v", nw)
				}
			},
		},
		{
			name: "static defaults",
			site: Site{Nodes: []Node{{Role: RoleMaster}, {Role: RoleMaster}, {Role: RoleMaster}}},
			check: func(t *testing.T, s *Site) {
				nw := s.Cluster.Networking
				if nw.NetworkType != "OVNKubernetes" || nw.ClusterNetwork[0].CIDR != "10.128.0.0/14" || nw.ClusterNetwork[0].HostPrefix != 23 || nw.ServiceNetwork[0] != "172.30.0.0/16" {
					t.Errorf("networking = %+v", nw)
				}
				if s.Cluster.Release.Architecture != "amd64" || s.Cluster.Platform != PlatformBaremetal {
					t.Errorf("arch %q platform %q", s.Cluster.Release.Architecture, s.Cluster.Platform)
				}
				if s.Nodes[0].BMC.Vendor != "" || s.Day1.DisableDefaultSources == nil || !*s.Day1.DisableDefaultSources {
					t.Error("vendor or disableDefaultSources not defaulted")
				}
				if s.Day1.ModuleBlacklist != nil {
					t.Errorf("no GPU, yet a blacklist: %+v", s.Day1.ModuleBlacklist)
				}
				g := s.GitOps
				if g.Channel != "latest" || g.RootApp.Namespace != "openshift-gitops" || g.RootApp.Name != "root" || g.InstallPlanApproval != "Automatic" {
					t.Errorf("gitops = %+v", g)
				}
				if !reflect.DeepEqual(s.Mirror.Platforms, []string{"linux/amd64"}) {
					t.Errorf("platforms = %v", s.Mirror.Platforms)
				}
			},
		},
		{
			name: "GPU worker gets irdma on pool worker",
			site: Site{Nodes: []Node{{Role: RoleMaster}, {Role: RoleWorker, GPU: true}}},
			check: func(t *testing.T, s *Site) {
				bl := s.Day1.ModuleBlacklist
				if len(bl) != 1 || !reflect.DeepEqual(bl[0].Modules, []string{"irdma"}) || !reflect.DeepEqual(bl[0].Pools, []string{"worker"}) {
					t.Errorf("blacklist = %+v", bl)
				}
			},
		},
		{
			name: "single GPU node: platform none, irdma on pool master",
			site: Site{Nodes: []Node{{Role: RoleMaster, GPU: true}}},
			check: func(t *testing.T, s *Site) {
				if s.Cluster.Platform != PlatformNone || !reflect.DeepEqual(s.Day1.ModuleBlacklist[0].Pools, []string{"master"}) {
					t.Errorf("platform %q blacklist %+v", s.Cluster.Platform, s.Day1.ModuleBlacklist)
				}
			},
		},
		{
			name: "explicit empty blacklist is kept",
			site: Site{Nodes: []Node{{Role: RoleWorker, GPU: true}}, Day1: Day1{ModuleBlacklist: []ModuleBlacklist{}}},
			check: func(t *testing.T, s *Site) {
				if len(s.Day1.ModuleBlacklist) != 0 {
					t.Errorf("blacklist = %+v", s.Day1.ModuleBlacklist)
				}
			},
		},
		{
			name: "ISO URL from a specific address, https with a certificate",
			site: Site{ISO: ISO{ServeAddress: "10.0.0.2:8443", TLSCert: "c.pem"}},
			check: func(t *testing.T, s *Site) {
				if s.ISO.BaseURL != "https://10.0.0.2:8443" {
					t.Errorf("baseURL = %q", s.ISO.BaseURL)
				}
			},
		},
		{
			name: "no ISO URL from a wildcard address",
			site: Site{ISO: ISO{ServeAddress: "0.0.0.0:8080"}},
			check: func(t *testing.T, s *Site) {
				if s.ISO.BaseURL != "" {
					t.Errorf("baseURL = %q", s.ISO.BaseURL)
				}
			},
		},
		{
			name: "set values are kept",
			site: Site{Cluster: Cluster{Networking: Networking{ServiceNetwork: []string{"172.31.0.0/16"}}}, GitOps: GitOps{Channel: "gitops-1.16"}},
			check: func(t *testing.T, s *Site) {
				if s.Cluster.Networking.ServiceNetwork[0] != "172.31.0.0/16" || s.GitOps.Channel != "gitops-1.16" {
					t.Error("a set value was overwritten")
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.site
			s.SetDefaults()
			tt.check(t, &s)
			again := s
			again.SetDefaults()
			if !reflect.DeepEqual(s, again) {
				t.Error("SetDefaults is not idempotent")
			}
		})
	}
}
