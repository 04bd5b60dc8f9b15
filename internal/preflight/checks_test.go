package preflight

import (
	"slices"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// Checks is deterministic, names are unique (they key results in the journal and the report),
// and every group contributes when the profile uses what it checks.
func TestChecksFromProfile(t *testing.T) {
	s := testSite()
	s.Cluster.NTPSources = []string{"127.0.0.1:1", "127.0.0.2:1"}
	s.Cluster.DNSServers = []string{"127.0.0.1:1"}
	s.Cluster.SSHKeyFile = "/nonexistent/id.pub"
	s.ISO.ServeAddress = "127.0.0.1:0"
	s.Nodes = []site.Node{{Name: "m0"}, {Name: "w0.other.test"}}
	s.GitOps = site.GitOps{RepoURL: "https://127.0.0.1:1/c.git", Revision: "main", Path: "clusters/lab"}
	names := func() []string {
		var out []string
		for _, c := range Checks(s, Options{WorkDir: t.TempDir()}) {
			out = append(out, string(c.Category())+"/"+c.Name())
		}
		return out
	}
	first := names()
	if second := names(); !slices.Equal(first, second) {
		t.Errorf("not deterministic:\n%v\n%v", first, second)
	}
	want := []string{
		"jumphost/disk work dir", "jumphost/iso serve address 127.0.0.1:0", "files/file cluster.sshKeyFile",
		"dns/dns api.lab.example.test", "dns/dns api-int.lab.example.test", "dns/dns *.apps.lab.example.test",
		"dns/dns m0.lab.example.test", "dns/dns w0.other.test",
		"ntp/ntp 127.0.0.1:1", "ntp/ntp 127.0.0.2:1",
		"network/vip 127.0.0.10 (api) free", "network/vip 127.0.0.11 (ingress) free",
		"git/git repository", "git/git revision main", "git/git path clusters/lab",
	}
	if !slices.Equal(first, want) {
		t.Errorf("checks:\n got %q\nwant %q", first, want)
	}
}
