package site

import (
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPodNetworkRoom holds hostPrefix and the cluster network's size to the agent installer's
// rules, on both sides of each boundary, IPv4 and IPv6.
func TestPodNetworkRoom(t *testing.T) {
	cases := []struct {
		name  string
		nets  []ClusterNetwork
		nodes int
		path  string // where the error is, "" for none
		want  string
	}{
		{"v4 hostPrefix 25", []ClusterNetwork{{"10.128.0.0/14", 25}}, 4, "", ""},
		{"v4 hostPrefix 26", []ClusterNetwork{{"10.128.0.0/14", 26}}, 4, "cluster.networking.clusterNetwork[0].hostPrefix", "must be at most 25"},
		{"v4 room for 4", []ClusterNetwork{{"10.128.0.0/23", 25}}, 4, "", ""},
		{"v4 room for 4, 5 nodes", []ClusterNetwork{{"10.128.0.0/23", 25}}, 5, "cluster.networking.clusterNetwork[0].cidr", "room for 4 node subnets and the profile has 5 nodes"},
		{"v4 room for 2, 3 nodes", []ClusterNetwork{{"10.128.0.0/24", 25}}, 3, "cluster.networking.clusterNetwork[0].cidr", "not large enough to accommodate 3 hosts"},
		{"v4 one subnet, one node", []ClusterNetwork{{"10.128.0.0/25", 25}}, 1, "", ""},
		{"v6 room for 4", []ClusterNetwork{{"fd01::/62", 64}}, 4, "", ""},
		{"v6 room for 4, 5 nodes", []ClusterNetwork{{"fd01::/62", 64}}, 5, "cluster.networking.clusterNetwork[0].cidr", "widen the cluster network to /61"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := &Site{Nodes: make([]Node, c.nodes)}
			s.Cluster.Networking.ClusterNetwork = c.nets
			ch := &checker{s: s}
			for i, cn := range c.nets {
				p := mustPrefix(t, cn.CIDR)
				ch.hostPrefixRoom("cluster.networking.clusterNetwork[0]", p, c.nets[i].HostPrefix)
			}
			switch {
			case c.path == "" && len(ch.probs) > 0:
				t.Errorf("unexpected: %v", ch.probs)
			case c.path != "" && (len(ch.probs) != 1 || ch.probs[0].Path != c.path || !strings.Contains(ch.probs[0].String(), c.want)):
				t.Errorf("got %v, want one error at %s containing %q", ch.probs, c.path, c.want)
			}
		})
	}
}

// TestKeyAndBundleContents: what the SSH key file and a trust bundle may hold.
func TestKeyAndBundleContents(t *testing.T) {
	pub, err := os.ReadFile(filepath.Join("testdata", "files", "ssh", "id_ed25519.pub"))
	if err != nil {
		t.Fatal(err)
	}
	ca, err := os.ReadFile(filepath.Join("testdata", "files", "ca.pem"))
	if err != nil {
		t.Fatal(err)
	}
	keys := []struct{ name, content, want string }{
		{"public key", string(pub), ""},
		{"comment then key", "# node key\n" + string(pub), ""},
		{"only comments", "# nothing here\n\n", "holds no SSH public key"},
		{"RSA private key", "-----BEGIN RSA PRIVATE KEY-----\nMIIB\n-----END RSA PRIVATE KEY-----\n", "holds a PRIVATE key"},
		{"PuTTY key", "PuTTY-User-Key-File-3: ssh-ed25519\n", "holds a PRIVATE key"},
		{"garbage", "ssh-ed25519 not-base64!\n", "is not an OpenSSH public key"},
	}
	for _, k := range keys {
		ch := &checker{s: &Site{}}
		ch.sshPublicKey("cluster.sshKeyFile", "key.pub", []byte(k.content))
		if got := ch.probs.String(); (k.want == "") != (got == "") || !strings.Contains(got, k.want) || strings.Contains(got, "MIIB") {
			t.Errorf("%s: %q, want %q", k.name, got, k.want)
		}
	}
	bundles := []struct{ name, content, want string }{
		{"one certificate", string(ca), ""},
		{"two and text between", "corporate CA\n" + string(ca) + "\nissuing CA\n" + string(ca), ""},
		{"a key after the certificate", string(ca) + "-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----\n", "line 12: a PRIVATE KEY block"},
		{"bad base64", "-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n", "not valid PEM"},
		{"a key after a bad block", "-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----\n", "line 4: a PRIVATE KEY block"},
		{"no END line", strings.Replace(string(ca), "-----END CERTIFICATE-----", "", 1), "not valid PEM"},
		{"DER", "0\x82\x01\x9a0\x82", "holds no PEM certificate"},
	}
	for _, b := range bundles {
		ch := &checker{s: &Site{}}
		ch.trustBundle("registry.caFile", "ca.pem", []byte(b.content))
		if got := ch.probs.String(); (b.want == "") != (got == "") || !strings.Contains(got, b.want) {
			t.Errorf("%s: %q, want %q", b.name, got, b.want)
		}
	}
}

func mustPrefix(t *testing.T, s string) netip.Prefix {
	t.Helper()
	p, err := netip.ParsePrefix(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
