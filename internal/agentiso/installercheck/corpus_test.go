package installercheck

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// corpus is the directory internal/agentiso's TestInstallerCorpus rendered the corpus into
// (-installer-corpus DIR): one directory per case with install-config.yaml, agent-config.yaml,
// the site profile they came from and expect.json. scripts/installercheck.sh renders it into a
// temporary directory and passes it in BOOTSTRAP_INSTALLER_CORPUS. The cases are data: adding
// one needs no rebuild of this test binary.
func corpus() string { return os.Getenv("BOOTSTRAP_INSTALLER_CORPUS") }

// expectation is expect.json: what `bootstrap validate` said about the case's site profile and
// what the installer must say about the rendered files.
type expectation struct {
	// Validate is "accept" or "reject": bootstrap validate's verdict on the site profile.
	Validate string `json:"validate"`
	// ValidateSays is validate's first error, for the failure message.
	ValidateSays string `json:"validateSays,omitempty"`
	// Installer is "accept" or "reject": what the installer must do with the rendered files.
	Installer string `json:"installer"`
	// InstallerSays is a piece of the installer's error that a rejection must contain.
	InstallerSays string `json:"installerSays,omitempty"`
	// Why says what the case is about.
	Why string `json:"why,omitempty"`
}

// TestInstallerCorpus loads every rendered case the way `openshift-install agent create image`
// does and holds the installer's verdict against the recorded one. It writes each verdict next to
// the case (installer.json), where internal/agentiso's TestInstallerAttribution maps each refusal
// back to the profile's field and holds validate's error to the same field. It is the differential test:
// a profile that `bootstrap validate` passes must be accepted by the installer, whatever the
// recorded expectation says.
func TestInstallerCorpus(t *testing.T) {
	root := corpus()
	if root == "" {
		t.Fatal("BOOTSTRAP_INSTALLER_CORPUS is not set: run scripts/installercheck.sh, which renders the corpus " +
			"(go test ./internal/agentiso -run TestInstallerCorpus -installer-corpus DIR) and sets it")
	}
	files, err := filepath.Glob(filepath.Join(root, "*", "expect.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 60 {
		t.Fatalf("%d cases under %s: the corpus was not rendered completely", len(files), root)
	}
	sort.Strings(files)
	counts := map[string]int{}
	for _, f := range files {
		dir := filepath.Dir(f)
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var e expectation
			if err := json.Unmarshal(data, &e); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if !verdict(e.Validate) || !verdict(e.Installer) {
				t.Fatalf("%s: validate %q, installer %q: each must be accept or reject", f, e.Validate, e.Installer)
			}
			err = check(t, dir)
			got := writeVerdict(t, filepath.Join(dir, verdictFile), err)
			counts["validate "+e.Validate+", installer "+got]++
			switch {
			case e.Validate == "accept" && err != nil:
				t.Fatalf("bootstrap validate passes %s but the installer rejects it: %v", name, err)
			case e.Installer == "accept" && err != nil:
				t.Fatalf("the installer rejects %s (expected to accept it: %s): %v", name, e.Why, err)
			case e.Installer == "reject" && err == nil:
				t.Fatalf("the installer accepts %s, expected a rejection mentioning %q (%s); fix the case or its expectation",
					name, e.InstallerSays, e.Why)
			case e.Installer == "reject" && !strings.Contains(err.Error(), e.InstallerSays):
				t.Fatalf("the installer rejects %s for another reason: %v\nwant it to mention %q", name, err, e.InstallerSays)
			}
		})
	}
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		t.Logf("%3d cases: %s", counts[k], k)
	}
}

func verdict(s string) bool { return s == "accept" || s == "reject" }
