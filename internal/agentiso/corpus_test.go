package agentiso

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// The installer corpus: site profiles generated from a table (profileSpec) and mutations of them
// listed in testdata/installer-corpus/mutations.yaml. TestInstallerCorpus validates each profile
// with `bootstrap validate`'s rules and renders it; with -installer-corpus DIR it writes each
// case to DIR/<name>/ (the site profile, install-config.yaml, agent-config.yaml and expect.json,
// the verdicts). scripts/installercheck.sh (part of `make test`) does that into a temporary
// directory and runs the installercheck module over it, which loads every case with the
// installer's own code and fails when the installer's verdict differs from the recorded one, or
// when it refuses a profile validate passed. Cases are data: adding one needs no rebuild of the
// installercheck binary.
var installerCorpus = flag.String("installer-corpus", "", "write the rendered installer corpus into this directory")

const corpusDir = "testdata/installer-corpus"

// profileSpec is one generated site profile.
type profileSpec struct {
	name             string
	masters, workers int
	stack            string // v4, v6, dual4 (IPv4 listed first), dual6 (IPv6 first)
	platform         string // "" (the default for the node count), none, baremetal
	bond             string // bond mode over eno1+eno2, "" for a plain NIC
	vlan             int    // VLAN id the node addresses sit on, 0 for none
	fqdn             bool   // nodes named by FQDN
	explicit         bool   // networking written out instead of left to the defaults
	mtu              int
	dhcpWorkers      bool // workers without networkConfig (DHCP)
	version          string
	anonymous        bool // no registry.authFile
	why              string
}

var corpusProfiles = []profileSpec{
	{name: "sno", masters: 1, stack: "v4", why: "single-node OpenShift, platform none by default"},
	{name: "sno-vlan", masters: 1, stack: "v4", vlan: 120, why: "SNO with its address on a VLAN"},
	{name: "sno-ipv6", masters: 1, stack: "v6", why: "SNO, IPv6 only (defaults give fd01::/48 and fd02::/112)"},
	{name: "sno-fqdn", masters: 1, stack: "v4", fqdn: true, why: "SNO named by FQDN"},
	{name: "sno-bond-vlan", masters: 1, stack: "v4", bond: "active-backup", vlan: 300, why: "SNO on a VLAN over an active-backup bond"},
	{name: "compact", masters: 3, stack: "v4", explicit: true, why: "three control-plane nodes, no workers, networks written out"},
	{name: "compact-none", masters: 3, stack: "v4", platform: "none", why: "compact on platform none (external load balancer, no VIPs)"},
	{name: "compact-fqdn", masters: 3, stack: "v4", fqdn: true, why: "compact, nodes named by FQDN"},
	{name: "ha-3m-2w", masters: 3, workers: 2, stack: "v4", why: "three control-plane nodes and two workers"},
	{name: "ha-dhcp-workers", masters: 3, workers: 2, stack: "v4", dhcpWorkers: true, why: "workers on DHCP, no networkConfig"},
	{name: "masters-4", masters: 4, workers: 1, stack: "v4", why: "four control-plane nodes (4.18+)"},
	{name: "masters-5", masters: 5, workers: 3, stack: "v4", why: "five control-plane nodes (4.18+)"},
	{name: "masters-5-none", masters: 5, stack: "v4", platform: "none", why: "five control-plane nodes on platform none"},
	{name: "ipv6", masters: 3, workers: 1, stack: "v6", why: "IPv6 only, networks from the defaults"},
	{name: "ipv6-explicit", masters: 3, stack: "v6", explicit: true, why: "IPv6 only, networks written out"},
	{name: "dual-v4-first", masters: 3, workers: 1, stack: "dual4", why: "dual-stack, IPv4 primary, networks from the defaults"},
	{name: "dual-v6-first", masters: 3, workers: 1, stack: "dual6", why: "dual-stack, IPv6 primary"},
	{name: "dual-explicit", masters: 3, stack: "dual4", explicit: true, why: "dual-stack, networks written out"},
	{name: "dual-v6-first-explicit", masters: 3, stack: "dual6", explicit: true, why: "dual-stack IPv6 primary, networks written out"},
	{name: "sno-dual", masters: 1, stack: "dual4", why: "SNO dual-stack"},
	{name: "bond-balance-rr", masters: 3, stack: "v4", bond: "balance-rr", why: "bond mode balance-rr"},
	{name: "bond-active-backup", masters: 3, stack: "v4", bond: "active-backup", why: "bond mode active-backup"},
	{name: "bond-balance-xor", masters: 3, stack: "v4", bond: "balance-xor", why: "bond mode balance-xor"},
	{name: "bond-broadcast", masters: 3, stack: "v4", bond: "broadcast", why: "bond mode broadcast"},
	{name: "bond-802.3ad", masters: 3, workers: 2, stack: "v4", bond: "802.3ad", mtu: 9000, why: "LACP bond with jumbo frames"},
	{name: "bond-balance-tlb", masters: 3, stack: "v4", bond: "balance-tlb", why: "bond mode balance-tlb"},
	{name: "bond-balance-alb", masters: 3, stack: "v4", bond: "balance-alb", why: "bond mode balance-alb"},
	{name: "vlan", masters: 3, workers: 1, stack: "v4", vlan: 20, why: "node addresses on a VLAN over a NIC"},
	{name: "bond-vlan-dual", masters: 3, workers: 1, stack: "dual4", bond: "802.3ad", vlan: 4094, why: "dual-stack on VLAN 4094 over an LACP bond"},
	{name: "vlan-ipv6-jumbo", masters: 3, stack: "v6", vlan: 1, mtu: 9000, why: "IPv6 on VLAN 1 with jumbo frames"},
	{name: "baremetal-explicit", masters: 3, workers: 2, stack: "v4", platform: "baremetal", explicit: true, fqdn: true, why: "platform baremetal written out, FQDN names"},
	{name: "anonymous-registry", masters: 3, stack: "v4", anonymous: true, why: "a mirror registry that allows anonymous pulls"},
	{name: "release-4-16", masters: 3, workers: 1, stack: "v4", version: "4.16.3", why: "an older release"},
}

// corpusMutation is one entry of mutations.yaml.
type corpusMutation struct {
	Name string `yaml:"name"`
	Base string `yaml:"base"`
	// Replace holds [old, new] pairs applied in order to the base profile's text; each old must
	// occur. All replaces every occurrence (renumbering a network), else the first.
	Replace [][2]string `yaml:"replace"`
	All     bool        `yaml:"all"`
	// Validate is bootstrap validate's verdict (accept or reject, default reject) and
	// ValidateSays a piece of its errors; Installer and InstallerSays the same for the installer.
	Validate      string `yaml:"validate"`
	ValidateSays  string `yaml:"validateSays"`
	Installer     string `yaml:"installer"`
	InstallerSays string `yaml:"installerSays"`
	Why           string `yaml:"why"`
}

// corpusExpect is expect.json, read by the installercheck module.
type corpusExpect struct {
	Validate      string `json:"validate"`
	ValidateSays  string `json:"validateSays,omitempty"`
	Installer     string `json:"installer"`
	InstallerSays string `json:"installerSays,omitempty"`
	Why           string `json:"why,omitempty"`
}

type net4 struct{ prefix, gw, dns string }

func (p profileSpec) families() []string {
	switch p.stack {
	case "v6":
		return []string{"v6"}
	case "dual4":
		return []string{"v4", "v6"}
	case "dual6":
		return []string{"v6", "v4"}
	}
	return []string{"v4"}
}

// addr is host n's address in a family; 5 and 6 are the VIPs, 11.. control plane, 21.. workers.
func addr(fam string, n int) string {
	if fam == "v6" {
		return fmt.Sprintf("fd00:30::%d", n)
	}
	return fmt.Sprintf("10.30.0.%d", n)
}

func machineCIDR(fam string) string {
	if fam == "v6" {
		return "fd00:30::/64"
	}
	return "10.30.0.0/24"
}

// siteYAML writes the profile as a person would.
func (p profileSpec) siteYAML() string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	fams := p.families()
	version := p.version
	if version == "" {
		version = "4.18.12"
	}
	w("apiVersion: bootstrap.openshift.io/v1alpha1")
	w("kind: Site")
	label := strings.ReplaceAll(p.name, ".", "-")
	w("metadata: {name: %s}", label)
	w("cluster:")
	w("  name: %s", label)
	w("  baseDomain: ai.example.com")
	w("  release: {version: \"%s\"}", version)
	if p.platform != "" {
		w("  platform: %s", p.platform)
	}
	w("  networking:")
	var mn []string
	for _, f := range fams {
		mn = append(mn, machineCIDR(f))
	}
	w("    machineNetwork: [%s]", strings.Join(mn, ", "))
	if p.explicit {
		w("    clusterNetwork:")
		for _, f := range fams {
			if f == "v6" {
				w("    - {cidr: fd01::/48, hostPrefix: 64}")
			} else {
				w("    - {cidr: 10.128.0.0/14, hostPrefix: 23}")
			}
		}
		var sn []string
		for _, f := range fams {
			if f == "v6" {
				sn = append(sn, "fd02::/112")
			} else {
				sn = append(sn, "172.30.0.0/16")
			}
		}
		w("    serviceNetwork: [%s]", strings.Join(sn, ", "))
	}
	vips := p.platform == "baremetal" || (p.platform == "" && p.masters > 1)
	if vips {
		var api, ing []string
		for _, f := range fams {
			api = append(api, addr(f, 5))
			ing = append(ing, addr(f, 6))
		}
		w("  apiVIPs: [%s]", strings.Join(api, ", "))
		w("  ingressVIPs: [%s]", strings.Join(ing, ", "))
	}
	w("  rendezvousIP: %s", addr(fams[0], 11))
	w("  ntpSources: [%s, ntp1.ai.example.com]", addr(fams[0], 1))
	w("  sshKeyFile: files/id_ed25519.pub")
	w("registry:")
	w("  host: registry.lab.example:8443")
	w("  caFile: files/registry-ca.pem")
	if !p.anonymous {
		w("  authFile: files/auth.json")
	}
	w("mirror: {imageSetConfig: files/imageset.yaml}")
	w("iso: {serveAddress: \"10.31.0.2:8080\"}")
	w("nodes:")
	for i := 0; i < p.masters+p.workers; i++ {
		role, name, host := "master", fmt.Sprintf("cp-%d", i), 11+i
		if i >= p.masters {
			role, name, host = "worker", fmt.Sprintf("gpu-%d", i-p.masters), 21+i-p.masters
		}
		if p.fqdn {
			name += "." + label + ".ai.example.com"
		}
		mac := func(nic int) string { return fmt.Sprintf("b8:ce:f6:%02x:%02x:%02x", host, nic, len(p.name)) }
		w("- name: %s", name)
		w("  role: %s", role)
		if role == "worker" {
			w("  gpu: true")
		}
		w("  bmc: {address: \"https://10.31.0.%d\", username: root, password: {file: files/bmc-password}}", host)
		w("  bootMAC: \"%s\"", mac(1))
		w("  interfaces:")
		w("  - {name: eno1, macAddress: \"%s\"}", mac(1))
		if p.bond != "" {
			w("  - {name: eno2, macAddress: \"%s\"}", mac(2))
		}
		w("  rootDevice: /dev/disk/by-path/pci-0000:02:00.0-nvme-1")
		if role == "worker" && p.dhcpWorkers {
			continue
		}
		w("  networkConfig:")
		w("    interfaces:")
		carrier := "eno1"
		mtu := ""
		if p.mtu != 0 {
			mtu = fmt.Sprintf(", mtu: %d", p.mtu)
		}
		if p.bond != "" {
			carrier = "bond0"
			w("    - {name: eno1, type: ethernet, state: up%s}", mtu)
			w("    - {name: eno2, type: ethernet, state: up%s}", mtu)
			w("    - name: bond0")
			w("      type: bond")
			w("      state: up")
			if p.mtu != 0 {
				w("      mtu: %d", p.mtu)
			}
			w("      link-aggregation:")
			w("        mode: %s", p.bond)
			w("        port: [eno1, eno2]")
			switch p.bond {
			case "802.3ad":
				w("        options: {miimon: 100, lacp_rate: fast, xmit_hash_policy: layer3+4}")
			case "active-backup":
				w("        options: {miimon: 100, primary: eno1}")
			case "balance-xor":
				w("        options: {miimon: 100, xmit_hash_policy: layer2+3}")
			default:
				w("        options: {miimon: 100}")
			}
		}
		addrIface := carrier
		if p.vlan != 0 {
			if p.bond == "" {
				w("    - {name: eno1, type: ethernet, state: up%s}", mtu)
			}
			addrIface = fmt.Sprintf("%s.%d", carrier, p.vlan)
			w("    - name: %s", addrIface)
			w("      type: vlan")
			w("      state: up")
			w("      vlan: {base-iface: %s, id: %d}", carrier, p.vlan)
		} else if p.bond == "" {
			w("    - name: eno1")
			w("      type: ethernet")
			w("      state: up")
			if p.mtu != 0 {
				w("      mtu: %d", p.mtu)
			}
		}
		// the addresses go under the entry just written: the VLAN, the bond or eno1
		for _, f := range []string{"v4", "v6"} {
			if !contains(fams, f) {
				continue
			}
			key := "ipv4"
			plen := 24
			if f == "v6" {
				key, plen = "ipv6", 64
			}
			w("      %s: {enabled: true, dhcp: false, address: [{ip: \"%s\", prefix-length: %d}]}", key, addr(f, host), plen)
		}
		w("    dns-resolver: {config: {server: [\"%s\"]}}", addr(fams[0], 1))
		w("    routes:")
		w("      config:")
		for _, f := range fams {
			dest := "0.0.0.0/0"
			if f == "v6" {
				dest = "::/0"
			}
			w("      - {destination: \"%s\", next-hop-address: \"%s\", next-hop-interface: %s}", dest, addr(f, 1), addrIface)
		}
	}
	w("gitops: {repoURL: \"https://git.example.com/org/cluster.git\"}")
	return b.String()
}

// corpusFiles writes the files the profiles reference into dir.
func corpusFiles(t *testing.T, dir string) {
	t.Helper()
	files := filepath.Join(dir, "files")
	if err := os.MkdirAll(files, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"id_ed25519.pub", "registry-ca.pem", "auth.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", "profiles", "files", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(files, f), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(files, "bmc-password"), []byte("not-a-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	isc := "apiVersion: mirror.openshift.io/v2alpha1\nkind: ImageSetConfiguration\nmirror: {}\n"
	if err := os.WriteFile(filepath.Join(files, "imageset.yaml"), []byte(isc), 0o644); err != nil {
		t.Fatal(err)
	}
}

// corpusCase is one profile to validate, render and record.
type corpusCase struct {
	name, text string
	expect     corpusExpect
}

func loadMutations(t *testing.T) []corpusMutation {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(corpusDir, "mutations.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var ms []corpusMutation
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&ms); err != nil {
		t.Fatalf("mutations.yaml: %v", err)
	}
	return ms
}

// corpusCases is the table's profiles followed by the mutations.
func corpusCases(t *testing.T) []corpusCase {
	t.Helper()
	base := map[string]string{}
	var cases []corpusCase
	for _, p := range corpusProfiles {
		text := p.siteYAML()
		base[p.name] = text
		cases = append(cases, corpusCase{name: p.name, text: text, expect: corpusExpect{Validate: "accept", Installer: "accept", Why: p.why}})
	}
	for _, m := range loadMutations(t) {
		text, ok := base[m.Base]
		switch {
		case !ok:
			t.Fatalf("mutation %s: no profile %q in the table", m.Name, m.Base)
		case base[m.Name] != "":
			t.Fatalf("mutation %s: the name is already used", m.Name)
		case len(m.Replace) == 0 || m.Why == "":
			t.Fatalf("mutation %s: needs replace and why", m.Name)
		}
		for _, r := range m.Replace {
			if !strings.Contains(text, r[0]) {
				t.Fatalf("mutation %s: %s has no %q", m.Name, m.Base, r[0])
			}
			n := 1
			if m.All {
				n = -1
			}
			text = strings.Replace(text, r[0], r[1], n)
		}
		e := corpusExpect{Validate: m.Validate, ValidateSays: m.ValidateSays, Installer: m.Installer, InstallerSays: m.InstallerSays, Why: m.Why}
		if e.Validate == "" {
			e.Validate = "reject"
		}
		if e.Installer == "" {
			e.Installer = "reject"
		}
		switch {
		case e.Validate == "accept" && e.Installer == "reject":
			t.Fatalf("mutation %s: validate accepts what the installer rejects: that is the bug this corpus exists to catch", m.Name)
		case e.Validate == "reject" && e.ValidateSays == "":
			t.Fatalf("mutation %s: say which error validate gives (validateSays)", m.Name)
		case e.Installer == "reject" && e.InstallerSays == "":
			t.Fatalf("mutation %s: say which error the installer gives (installerSays)", m.Name)
		}
		base[m.Name] = text
		cases = append(cases, corpusCase{name: m.Name, text: text, expect: e})
	}
	return cases
}

// TestInstallerCorpus validates and renders every corpus case; with -installer-corpus it writes
// them for the installercheck module.
func TestInstallerCorpus(t *testing.T) {
	dir := t.TempDir()
	corpusFiles(t, dir)
	mirror, err := LoadMirrorOutputs(filepath.Join("testdata", "mirror"))
	if err != nil {
		t.Fatal(err)
	}
	cases := corpusCases(t)
	if len(corpusProfiles) < 30 || len(cases) < 2*len(corpusProfiles) {
		t.Errorf("the corpus shrank to %d profiles, %d cases", len(corpusProfiles), len(cases))
	}
	generated := generatedCases(t, dir)
	if len(generated) < 60 {
		t.Errorf("the generated mutants shrank to %d", len(generated))
	}
	cases = append(cases, generated...)
	t.Logf("installer corpus: %d table profiles, %d listed mutations, %d generated mutants", len(corpusProfiles), len(cases)-len(corpusProfiles)-len(generated), len(generated))
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, ps := validateCase(t, dir, c)
			var errs []string
			for _, p := range ps {
				errs = append(errs, p.String())
			}
			all := strings.ReplaceAll(strings.Join(errs, "\n"), dir+string(filepath.Separator), "")
			switch {
			case c.expect.Validate == "accept" && len(errs) > 0:
				t.Fatalf("validate rejects %s:\n%s\n--- profile\n%s", c.name, all, c.text)
			case c.expect.Validate == "reject" && len(errs) == 0:
				t.Fatalf("validate accepts %s; expected an error mentioning %q (%s)", c.name, c.expect.ValidateSays, c.expect.Why)
			case c.expect.Validate == "reject" && !strings.Contains(all, c.expect.ValidateSays):
				t.Fatalf("validate rejects %s for another reason:\n%s\nwant an error mentioning %q", c.name, all, c.expect.ValidateSays)
			}
			if s == nil {
				t.Fatalf("%s did not load: the installer needs rendered files", c.name)
			}
			s.SetDefaults()
			r, err := Render(RenderOptions{Site: s, Mirror: mirror})
			if err != nil {
				t.Fatalf("render %s: %v", c.name, err)
			}
			if *installerCorpus == "" {
				return
			}
			e := c.expect
			if e.Validate == "reject" {
				// validate's words in Why too: the installercheck module prints Why with the
				// installer's error when the two disagree, so a failure shows both messages.
				e.ValidateSays = firstLine(all)
				e.Why += "; validate says: " + e.ValidateSays
			}
			exp, err := json.MarshalIndent(e, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(*installerCorpus, c.name)
			files := map[string][]byte{"site.yaml": []byte(c.text), "expect.json": append(exp, '\n')}
			for _, f := range r.Files {
				if f.Path == InstallConfigFile || f.Path == AgentConfigFile {
					files[f.Path] = f.Data
				}
			}
			if err := os.MkdirAll(out, 0o755); err != nil {
				t.Fatal(err)
			}
			for name, data := range files {
				if err := os.WriteFile(filepath.Join(out, name), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}
