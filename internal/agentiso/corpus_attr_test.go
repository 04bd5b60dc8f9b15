package agentiso

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/finding"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// validateCase writes a corpus case's profile into dir and validates it as `bootstrap validate`
// does; it returns the loaded profile (nil when it does not load) and the errors.
func validateCase(t *testing.T, dir string, c corpusCase) (*site.Site, finding.List) {
	t.Helper()
	file := filepath.Join(dir, c.name+".yaml")
	if err := os.WriteFile(file, []byte(c.text), 0o644); err != nil {
		t.Fatal(err)
	}
	var ps finding.List
	s, err := site.Load(file)
	if err != nil {
		var ok bool
		if ps, ok = site.AsProblems(err); !ok {
			t.Fatal(err)
		}
	} else {
		ps = s.Validate(site.WithLookupEnv(func(string) (string, bool) { return "", false }))
	}
	var errs finding.List
	for _, p := range ps {
		if p.Status == finding.Fail {
			errs = append(errs, p)
		}
	}
	return s, errs
}

// sameProblem holds the one pair of places where validate and the installer name the same problem
// at two ends on purpose: the rendezvous address on a worker. The installer names the host's role
// (hosts[i].role: Forbidden: ... has the rendezvousIP assigned to it); validate names
// cluster.rendezvousIP, because the fix a user makes is almost always to point it at a master, not
// to change a node's role. Any other pair is a wrong attribution.
func sameProblem(validate, installer string) bool {
	return validate == "cluster.rendezvousIP" && strings.HasPrefix(installer, "nodes[") && strings.HasSuffix(installer, "].role")
}

// samePlace reports whether a validate finding at path a and an installer refusal mapped to path
// b name the same field: equal, or one inside the other (the installer names a node's
// interfaces, validate the node's bootMAC list entry; the installer a cluster network, validate
// its cidr).
func samePlace(a, b string) bool {
	if a == b {
		return true
	}
	inside := func(x, y string) bool {
		return strings.HasPrefix(x, y) && (x[len(y)] == '.' || x[len(y)] == '[')
	}
	return inside(a, b) || inside(b, a)
}

// TestInstallerAttribution holds validate's findings to the installer's refusals, field by field:
// for every corpus case both refuse, the profile field the installer's error names
// (InstallerFieldPaths over the installercheck module's installer.json) must be a field validate
// reports an error at. It needs the corpus the installercheck binary has judged:
// scripts/installercheck.sh runs it with -installer-corpus DIR after the binary. Without that
// directory it checks the mapping on the golden profiles' own paths.
func TestInstallerAttribution(t *testing.T) {
	if *installerCorpus == "" {
		// the mapping alone, on field paths as the installer words them
		for msg, want := range map[string]string{
			"invalid NetworkType configured: spec.networking.clusterNetwork[1].hostPrefix: Invalid value: 26: must be at most 25": "cluster.networking.clusterNetwork[1].hostPrefix",
			"spec.networking.clusterNetwork[0]: Invalid value: \"10.128.0.0/24\": prefix length 24 not large enough":              "cluster.networking.clusterNetwork[0].cidr",
			"invalid install-config configuration: platform.baremetal.apiVIPs: Invalid value: \"fd00:99::5\": IP expected":        "cluster.apiVIPs",
			"invalid Hosts configuration: Hosts[2].rootDeviceHints.deviceName: Invalid value: \"/dev/disk/by-path/x/\": Device":   "nodes[2].rootDevice",
			"agent-config: hosts[1].interfaces[0].macAddress: Invalid value: \"c5:cb\": expected unicast mac address":             "nodes[1].interfaces[0] nodes[1].bootMAC",
		} {
			if got := strings.Join(InstallerFieldPaths(msg), " "); got != want {
				t.Errorf("InstallerFieldPaths(%q) = %s, want %s", msg, got, want)
			}
		}
		return
	}
	dir := t.TempDir()
	corpusFiles(t, dir)
	cases := append(corpusCases(t), generatedCases(t, dir)...)
	both, unplaced := 0, 0
	for _, c := range cases {
		data, err := os.ReadFile(filepath.Join(*installerCorpus, c.name, "installer.json"))
		if err != nil {
			t.Fatalf("%s: no verdict from the installercheck binary: %v", c.name, err)
		}
		var v InstallerVerdict
		if err := json.Unmarshal(data, &v); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if v.Verdict != "reject" {
			continue
		}
		_, errs := validateCase(t, dir, c)
		if len(errs) == 0 {
			continue // TestInstallerCorpus in the module reports it
		}
		both++
		paths := InstallerFieldPaths(v.Error)
		if len(paths) == 0 {
			unplaced++
			t.Logf("%s: the installer's refusal names no profile field: %s", c.name, v.Error)
			continue
		}
		found := false
		for _, p := range errs {
			for _, ip := range paths {
				found = found || samePlace(p.Path, ip) || sameProblem(p.Path, ip)
			}
		}
		if !found {
			var at []string
			for _, p := range errs {
				at = append(at, p.Path)
			}
			t.Errorf("%s: the installer refuses %s, validate reports %s\ninstaller: %s\nvalidate: %s",
				c.name, strings.Join(paths, ", "), strings.Join(at, ", "), v.Error, errs[0])
		}
	}
	t.Logf("%d cases refused by both; %d of them by an installer error that names no profile field", both, unplaced)
	if both < 40 {
		t.Errorf("only %d cases refused by both: the corpus was not judged completely", both)
	}
}

// TestInstallerProblemsAtTheField: a refusal comes back as a validate finding at the line and
// column of the profile field it names, with the installer's words; a refusal naming no field
// the mapping knows is one finding at the document.
func TestInstallerProblemsAtTheField(t *testing.T) {
	dir := t.TempDir()
	corpusFiles(t, dir)
	var text string
	for _, p := range corpusProfiles {
		if p.name == "compact" {
			text = p.siteYAML()
		}
	}
	file := filepath.Join(dir, "compact.yaml")
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := site.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	msg := "failed to fetch AgentClusterInstall Config: failed to generate asset \"AgentClusterInstall Config\": invalid NetworkType configured: spec.networking.clusterNetwork[0].hostPrefix: Invalid value: 26: must be at most 25"
	ps := InstallerProblems(s, InstallerVerdict{Verdict: "reject", Error: msg})
	line := 1 + strings.Count(text[:strings.Index(text, "hostPrefix: 23")], "\n")
	if len(ps) != 1 || ps[0].Path != "cluster.networking.clusterNetwork[0].hostPrefix" || ps[0].Line != line ||
		ps[0].Status != finding.Fail || !strings.Contains(ps[0].Message, "must be at most 25") {
		t.Fatalf("got %+v, want one error at line %d", ps, line)
	}
	ps = InstallerProblems(s, InstallerVerdict{Verdict: "reject", Error: "failed to fetch Agent Installer ISO: something else"})
	if len(ps) != 1 || ps[0].Path != "" || ps[0].File != file {
		t.Fatalf("an unmapped refusal: %+v", ps)
	}
	if ps := InstallerProblems(s, InstallerVerdict{Verdict: "accept"}); ps != nil {
		t.Fatalf("accepted, yet %v", ps)
	}
}
