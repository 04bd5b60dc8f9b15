package agentiso

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/bootstrap-dev/bootstrap/internal/site"
	shipped "github.com/bootstrap-dev/bootstrap/profiles"
)

// The generated half of the installer corpus: every rule below is applied to every base profile
// it fits (the shipped profiles, and the IPv6 and dual-stack profiles of the table), so the
// corpus grows with the profiles and the rules, not with hand-picked cases. A rule says what
// validate and the installer do with the field it changes: validate's verdict is checked here
// (TestInstallerCorpus), the installer's by the installercheck module, which fails a case whose
// verdict differs and prints both messages. A rule is one field and one kind of change: empty,
// too long, a boundary value, a duplicate, the other address family.

// genBases are the profiles the rules are applied to: the shipped ones, and the table's IPv6 and
// dual-stack profiles (no shipped profile is IPv6).
var genBases = []string{"lab", "dell-xe7740-h200", "compact-3node", "sno", "ipv6-explicit", "dual-explicit"}

// genRule is one mutation rule.
type genRule struct {
	name string
	// fits says whether the rule applies to a base (nil: every base).
	fits func(s *site.Site) bool
	// edit changes the loaded base; files is a directory for files the rule writes.
	edit func(t *testing.T, s *site.Site, files string)
	// text, when set, edits the marshaled profile (a MAC renamed everywhere).
	text func(s *site.Site, yaml string) string
	// validateSays is a piece of validate's error, "" when validate accepts.
	validateSays string
	// installer is the installer's verdict on the rendered files and installerSays a piece of its
	// error when it rejects.
	installer, installerSays string
	why                      string
}

var longLabel = strings.Repeat("a", 64)

var genRules = []genRule{
	{name: "cluster-name-54", edit: func(_ *testing.T, s *site.Site, _ string) { s.Cluster.Name = strings.Repeat("c", 54) },
		installer: "accept", why: "the longest cluster name the installer takes (a DNS label less *.apps.)"},
	{name: "cluster-name-55", edit: func(_ *testing.T, s *site.Site, _ string) { s.Cluster.Name = strings.Repeat("c", 55) },
		validateSays: "must be no more than 54 characters", installer: "reject", installerSays: "must be no more than 54 characters", why: "one character too long"},
	{name: "cluster-name-empty", edit: func(_ *testing.T, s *site.Site, _ string) { s.Cluster.Name = "" },
		validateSays: `required field "name"`, installer: "reject", installerSays: "metadata.name", why: "no cluster name"},
	{name: "basedomain-empty", edit: func(_ *testing.T, s *site.Site, _ string) { s.Cluster.BaseDomain = "" },
		validateSays: `required field "baseDomain"`, installer: "reject", installerSays: "baseDomain", why: "no base domain"},
	{name: "basedomain-uppercase", edit: func(_ *testing.T, s *site.Site, _ string) {
		s.Cluster.BaseDomain = strings.ToUpper(s.Cluster.BaseDomain)
	},
		validateSays: "is not a DNS domain", installer: "reject", installerSays: "a lowercase RFC 1123 subdomain", why: "the installer's domain rule is lower case"},
	{name: "ntp-label-63", edit: func(_ *testing.T, s *site.Site, _ string) {
		s.Cluster.NTPSources = append([]string{longLabel[:63] + ".example.com"}, s.Cluster.NTPSources...)
	}, installer: "accept", why: "the longest DNS label"},
	{name: "ntp-label-64", edit: func(_ *testing.T, s *site.Site, _ string) {
		s.Cluster.NTPSources = append([]string{longLabel + ".example.com"}, s.Cluster.NTPSources...)
	}, validateSays: "longer than 63 characters", installer: "accept", why: "no resolver answers for a 64-character label; the installer's subdomain rule has no label limit"},
	{name: "ntp-with-port", edit: func(_ *testing.T, s *site.Site, _ string) {
		s.Cluster.NTPSources = append([]string{"10.0.0.1:123"}, s.Cluster.NTPSources...)
	},
		validateSays: "drop the port", installer: "reject", installerSays: "NTP server is not a valid IP or domain name", why: "chrony takes no port"},
	{name: "hostprefix-25", fits: hasV4Pods, edit: func(_ *testing.T, s *site.Site, _ string) { setV4HostPrefix(s, 25) },
		installer: "accept", why: "the largest IPv4 hostPrefix: 128 pod addresses a node"},
	{name: "hostprefix-26", fits: hasV4Pods, edit: func(_ *testing.T, s *site.Site, _ string) { setV4HostPrefix(s, 26) },
		validateSays: "must be at most 25", installer: "reject", installerSays: "hostPrefix: Invalid value: 26: must be at most 25",
		why: "fewer than 128 pod addresses a node: AgentClusterInstall refuses it when agent create image derives the cluster manifests"},
	{name: "ipv6-hostprefix-63", fits: hasV6Pods, edit: func(_ *testing.T, s *site.Site, _ string) {
		for i, cn := range s.Cluster.Networking.ClusterNetwork {
			if strings.Contains(cn.CIDR, ":") {
				s.Cluster.Networking.ClusterNetwork[i].HostPrefix = 63
			}
		}
	}, validateSays: "must be 64 for IPv6 networks", installer: "reject", installerSays: "must be 64 for IPv6 networks", why: "a node takes a /64"},
	{name: "cluster-network-one-subnet-short", fits: func(s *site.Site) bool { return hasV4Pods(s) && len(s.Nodes) > 1 }, edit: func(_ *testing.T, s *site.Site, _ string) {
		for i, cn := range s.Cluster.Networking.ClusterNetwork {
			if p, err := netip.ParsePrefix(cn.CIDR); err == nil && p.Addr().Is4() {
				s.Cluster.Networking.ClusterNetwork[i].CIDR = netip.PrefixFrom(p.Addr(), cn.HostPrefix-1).Masked().String()
			}
		}
	}, validateSays: "node subnets and the profile has", installer: "reject", installerSays: "not large enough to accommodate",
		why: "two node subnets for more nodes: AgentClusterInstall refuses it when agent create image derives the cluster manifests"},
	{name: "service-network-12", fits: hasV4Service, edit: func(_ *testing.T, s *site.Site, _ string) { setV4Service(s, "172.16.0.0/12") },
		installer: "accept", why: "the largest IPv4 service network"},
	{name: "service-network-11", fits: hasV4Service, edit: func(_ *testing.T, s *site.Site, _ string) { setV4Service(s, "172.0.0.0/11") },
		validateSays: "must be /12 or greater", installer: "reject", installerSays: "subnet size for IPv4 service network must be /12 or greater", why: "one bit too wide"},
	{name: "api-vip-other-family", fits: oneV4VIP, edit: func(_ *testing.T, s *site.Site, _ string) { s.Cluster.APIVIPs = []string{"fd00:99::5"} },
		validateSays: "is outside the machine network", installer: "reject", installerSays: "IP expected to be in one of the machine networks", why: "an IPv6 VIP on an IPv4 machine network"},
	{name: "ingress-vip-duplicate-api", fits: oneV4VIP, edit: func(_ *testing.T, s *site.Site, _ string) { s.Cluster.IngressVIPs = s.Cluster.APIVIPs },
		validateSays: "must be different addresses", installer: "reject", installerSays: "VIP for API must not be one of the Ingress VIPs", why: "one address for both VIPs"},
	{name: "root-device-trailing-slash", fits: byPathRoot, edit: func(_ *testing.T, s *site.Site, _ string) { s.Nodes[0].RootDevice += "/" },
		validateSays: "has a '/' after /dev/disk/by-path/", installer: "reject", installerSays: "Device Name of root device hint must be path in /dev/ or /dev/disk/by-path/", why: "a trailing slash"},
	{name: "root-device-double-slash", fits: byPathRoot, edit: func(_ *testing.T, s *site.Site, _ string) {
		s.Nodes[0].RootDevice = strings.Replace(s.Nodes[0].RootDevice, "by-path/", "by-path//", 1)
	}, validateSays: "has a '/' after /dev/disk/by-path/", installer: "reject", installerSays: "Device Name of root device hint must be path in /dev/ or /dev/disk/by-path/", why: "a doubled slash"},
	{name: "root-device-kernel-name", edit: func(_ *testing.T, s *site.Site, _ string) { s.Nodes[0].RootDevice = "/dev/sda" },
		validateSays: "kernel name that changes between boots", installer: "accept", why: "/dev/sdX moves between boots on Dell servers"},
	{name: "node-name-uppercase", edit: func(_ *testing.T, s *site.Site, _ string) { s.Nodes[0].Name = strings.ToUpper(s.Nodes[0].Name) },
		validateSays: "is not a valid host name", installer: "accept", why: "the assisted service refuses it, the installer does not check"},
	{name: "role-gpu", fits: lastIsWorker, edit: func(_ *testing.T, s *site.Site, _ string) { s.Nodes[len(s.Nodes)-1].Role = "gpu" },
		validateSays: "is not master or worker", installer: "reject", installerSays: `Unsupported value: "gpu"`, why: "no such role"},
	{name: "mac-multicast", fits: unicastBootMAC, text: func(s *site.Site, y string) string {
		mac := s.Nodes[0].BootMAC
		b, _ := strconv.ParseUint(mac[:2], 16, 8)
		return replaceFold(y, mac, fmt.Sprintf("%02x", b|1)+mac[2:])
	}, validateSays: "multicast", installer: "reject", installerSays: "expected unicast mac address, found multicast", why: "a group address is no NIC's"},
	{name: "mac-duplicate", fits: func(s *site.Site) bool {
		return len(s.Nodes) > 1 && s.Nodes[0].BootMAC != "" && s.Nodes[1].BootMAC != ""
	},
		text:         func(s *site.Site, y string) string { return replaceFold(y, s.Nodes[1].BootMAC, s.Nodes[0].BootMAC) },
		validateSays: "already", installer: "reject", installerSays: "duplicate MAC address found", why: "two hosts with one MAC"},
	{name: "ssh-key-private", edit: func(t *testing.T, s *site.Site, files string) {
		s.Cluster.SSHKeyFile = writeGen(t, files, "private-key.pub", "-----BEGIN OPENSSH PRIVATE KEY-----\nbm90IGEgcmVhbCBrZXk=\n-----END OPENSSH PRIVATE KEY-----\n")
	}, validateSays: "holds a PRIVATE key", installer: "reject", installerSays: "sshKey", why: "a private key in the public key's place"},
	{name: "ssh-key-empty", edit: func(t *testing.T, s *site.Site, files string) {
		s.Cluster.SSHKeyFile = writeGen(t, files, "empty.pub", "")
	},
		validateSays: "holds no SSH public key", installer: "accept", why: "the installer takes a cluster without an SSH key; gather could not log in"},
	{name: "ca-malformed", fits: func(s *site.Site) bool { return s.Registry.CAFile != "" }, edit: func(t *testing.T, s *site.Site, files string) {
		s.Registry.CAFile = writeGen(t, files, "malformed-ca.pem", malformedCert(t))
	}, validateSays: "the certificate is malformed", installer: "reject", installerSays: "additionalTrustBundle", why: "a truncated certificate"},
	{name: "trust-bundle-trusted-certificate", edit: func(t *testing.T, s *site.Site, files string) {
		good := readGen(t, "registry-ca.pem")
		trusted := strings.ReplaceAll(good, " CERTIFICATE-----", " TRUSTED CERTIFICATE-----")
		s.Day1.TrustBundles = append(s.Day1.TrustBundles, writeGen(t, files, "trusted-ca.pem", trusted+good))
	}, validateSays: "TRUSTED CERTIFICATE", installer: "accept", why: "rendering would drop the TRUSTED CERTIFICATE block silently"},
	{name: "cpu-partitioning-all-nodes", edit: func(_ *testing.T, s *site.Site, _ string) { s.Cluster.CPUPartitioningMode = "AllNodes" },
		installer: "accept", why: "workload partitioning on every node"},
	{name: "capabilities-minimal", edit: func(_ *testing.T, s *site.Site, _ string) {
		s.Cluster.Capabilities = site.Capabilities{BaselineCapabilitySet: "None",
			AdditionalEnabledCapabilities: []string{"baremetal", "MachineAPI", "Ingress", "marketplace", "OperatorLifecycleManager"}}
	}, installer: "accept", why: "the smallest set a bootstrap cluster takes"},
	{name: "capabilities-wrong-case", edit: func(_ *testing.T, s *site.Site, _ string) {
		s.Cluster.Capabilities = site.Capabilities{BaselineCapabilitySet: "vCurrent", AdditionalEnabledCapabilities: []string{"Baremetal"}}
	}, validateSays: "write baremetal", installer: "reject", installerSays: `Unsupported value: "Baremetal"`, why: "capability names are case-sensitive"},
	{name: "capabilities-unknown-set", edit: func(_ *testing.T, s *site.Site, _ string) {
		s.Cluster.Capabilities = site.Capabilities{BaselineCapabilitySet: "4.18"}
	}, validateSays: `Unsupported value: "4.18"`, installer: "reject", installerSays: `Unsupported value: "4.18"`, why: "set names begin with v"},
	{name: "capabilities-no-ingress", edit: func(_ *testing.T, s *site.Site, _ string) {
		s.Cluster.Capabilities = site.Capabilities{BaselineCapabilitySet: "None",
			AdditionalEnabledCapabilities: []string{"baremetal", "MachineAPI", "marketplace", "OperatorLifecycleManager"}}
	}, validateSays: "the Ingress capability is required", installer: "reject", installerSays: "the Ingress capability is required", why: "the cluster has no router"},
	{name: "proxy", edit: func(_ *testing.T, s *site.Site, _ string) {
		s.Cluster.Proxy = site.Proxy{HTTPProxy: "http://proxy.example.com:3128", HTTPSProxy: "http://proxy.example.com:3128", NoProxy: []string{hostOnly(s.Registry.Host), ".example.com"}}
	}, installer: "accept", why: "a proxy, the mirror registry reached directly"},
	{name: "proxy-https-scheme-for-http", edit: func(_ *testing.T, s *site.Site, _ string) {
		s.Cluster.Proxy = site.Proxy{HTTPProxy: "https://proxy.example.com:3128", NoProxy: []string{hostOnly(s.Registry.Host)}}
	}, validateSays: `Unsupported value: "https"`, installer: "reject", installerSays: `Unsupported value: "https"`, why: "httpProxy takes an http URL"},
	{name: "proxy-noproxy-wildcard", edit: func(_ *testing.T, s *site.Site, _ string) {
		s.Cluster.Proxy = site.Proxy{HTTPProxy: "http://proxy.example.com:3128", NoProxy: []string{hostOnly(s.Registry.Host), "*.example.com"}}
	}, validateSays: "without wildcard characters", installer: "reject", installerSays: "without wildcard characters", why: `"*." is no domain`},
	{name: "proxy-noproxy-only", edit: func(_ *testing.T, s *site.Site, _ string) {
		s.Cluster.Proxy = site.Proxy{NoProxy: []string{".example.com"}}
	},
		validateSays: "must include httpProxy or httpsProxy", installer: "reject", installerSays: "must include httpProxy or httpsProxy", why: "noProxy without a proxy"},
	{name: "proxy-credentials", edit: func(_ *testing.T, s *site.Site, _ string) {
		s.Cluster.Proxy = site.Proxy{HTTPProxy: "http://user:not-a-secret@proxy.example.com:3128", NoProxy: []string{hostOnly(s.Registry.Host)}}
	}, validateSays: "carries credentials", installer: "accept", why: "the password would be in the profile, the journal and install-config"},
}

func hasV4Pods(s *site.Site) bool    { return hasFamily(podCIDRs(s), false) }
func hasV6Pods(s *site.Site) bool    { return hasFamily(podCIDRs(s), true) }
func hasV4Service(s *site.Site) bool { return hasFamily(s.Cluster.Networking.ServiceNetwork, false) }
func byPathRoot(s *site.Site) bool {
	return strings.HasPrefix(s.Nodes[0].RootDevice, "/dev/disk/by-path/")
}
func oneV4VIP(s *site.Site) bool {
	return s.Cluster.Platform == site.PlatformBaremetal && len(s.Cluster.APIVIPs) == 1 && !strings.Contains(s.Cluster.APIVIPs[0], ":")
}

func lastIsWorker(s *site.Site) bool { return s.Nodes[len(s.Nodes)-1].Role == site.RoleWorker }

func unicastBootMAC(s *site.Site) bool {
	b, err := strconv.ParseUint(s.Nodes[0].BootMAC[:min(2, len(s.Nodes[0].BootMAC))], 16, 8)
	return err == nil && b&1 == 0
}

func podCIDRs(s *site.Site) []string {
	var out []string
	for _, cn := range s.Cluster.Networking.ClusterNetwork {
		out = append(out, cn.CIDR)
	}
	return out
}

func hasFamily(cidrs []string, v6 bool) bool {
	for _, c := range cidrs {
		if strings.Contains(c, ":") == v6 {
			return true
		}
	}
	return false
}

func setV4HostPrefix(s *site.Site, n int) {
	for i, cn := range s.Cluster.Networking.ClusterNetwork {
		if !strings.Contains(cn.CIDR, ":") {
			s.Cluster.Networking.ClusterNetwork[i].HostPrefix = n
		}
	}
}

func setV4Service(s *site.Site, cidr string) {
	for i, sn := range s.Cluster.Networking.ServiceNetwork {
		if !strings.Contains(sn, ":") {
			s.Cluster.Networking.ServiceNetwork[i] = cidr
		}
	}
}

func hostOnly(hostport string) string {
	if i := strings.LastIndexByte(hostport, ':'); i > 0 && !strings.Contains(hostport[:i], ":") {
		return hostport[:i]
	}
	return hostport
}

// replaceFold replaces every spelling of old (any case) with new.
func replaceFold(s, old, new string) string {
	return regexp.MustCompile("(?i)"+regexp.QuoteMeta(old)).ReplaceAllString(s, new)
}

func writeGen(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func readGen(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "profiles", "files", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// malformedCert is the test registry CA with its last base64 line cut: valid PEM, truncated DER.
func malformedCert(t *testing.T) string {
	lines := strings.Split(strings.TrimSpace(readGen(t, "registry-ca.pem")), "\n")
	return strings.Join(append(lines[:len(lines)-2], lines[len(lines)-1]), "\n") + "\n"
}

// genBaseText is a base profile's text: a shipped profile, or one of the table's.
func genBaseText(t *testing.T, name string) string {
	t.Helper()
	for _, p := range corpusProfiles {
		if p.name == name {
			return p.siteYAML()
		}
	}
	b, err := shipped.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// materializeProfile creates every file a loaded profile names, with content validate accepts: an SSH
// public key, CA certificates, an auth file with the registry's entry, private secrets.
func materializeProfile(t *testing.T, s *site.Site) {
	t.Helper()
	for _, lp := range append(s.LocalPaths(), site.LocalPath{Field: "ssh private key", Path: s.SSHPrivateKeyFile(), Kind: "secret"}) {
		if lp.Path == "" || (lp.Kind == "exec" && !filepath.IsAbs(lp.Path)) {
			continue
		}
		if lp.Kind == "dir" {
			if err := os.MkdirAll(lp.Path, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(lp.Path), 0o755); err != nil {
			t.Fatal(err)
		}
		content, mode := "fixture\n", os.FileMode(0o644)
		switch {
		case lp.Field == "registry.authFile":
			content, mode = `{"auths":{"`+s.Registry.Host+`":{"auth":"Zml4dHVyZTpmaXh0dXJl"}}}`, 0o600
		case lp.Kind == "secret":
			content, mode = "fixture-secret\n", 0o600
		case strings.HasSuffix(lp.Path, ".pub"):
			content = readGen(t, "id_ed25519.pub")
		case strings.HasSuffix(lp.Path, ".pem"):
			content = readGen(t, "registry-ca.pem")
		case lp.Kind == "exec":
			content, mode = "#!/bin/sh\n", 0o755
		}
		if err := os.WriteFile(lp.Path, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(lp.Path, mode); err != nil {
			t.Fatal(err)
		}
	}
}

// generatedCases applies every rule to every base it fits, in dir, and returns the cases with
// their expectations. The profiles name their files by absolute path (under dir/gen-BASE/).
func generatedCases(t *testing.T, dir string) []corpusCase {
	t.Helper()
	var cases []corpusCase
	for _, base := range genBases {
		bdir := filepath.Join(dir, "gen-"+base)
		if err := os.MkdirAll(bdir, 0o755); err != nil {
			t.Fatal(err)
		}
		file := writeGen(t, bdir, "site.yaml", genBaseText(t, base))
		load := func() *site.Site {
			s, err := site.Load(file)
			if err != nil {
				t.Fatalf("base %s: %v", base, err)
			}
			return s
		}
		materializeProfile(t, load())
		for _, r := range genRules {
			s := load()
			if r.fits != nil && !r.fits(s) {
				continue
			}
			if r.edit != nil {
				r.edit(t, s, bdir)
			}
			out, err := yaml.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			text := string(out)
			if r.text != nil {
				text = r.text(s, text)
			}
			e := corpusExpect{Validate: "accept", Installer: r.installer, InstallerSays: r.installerSays,
				Why: fmt.Sprintf("generated: rule %s on %s: %s", r.name, base, r.why)}
			if r.validateSays != "" {
				e.Validate, e.ValidateSays = "reject", r.validateSays
			}
			cases = append(cases, corpusCase{name: "gen-" + base + "-" + r.name, text: text, expect: e})
		}
	}
	return cases
}
