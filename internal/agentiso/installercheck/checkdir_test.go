package installercheck

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// verdictFile is the installer's verdict on one rendered directory, as JSON: what internal/agentiso
// reads (InstallerVerdict) to map a refusal back to the site profile's file:line:col.
const verdictFile = "installer.json"

// installerVerdict is installer.json.
type installerVerdict struct {
	// Verdict is "accept" or "reject".
	Verdict string `json:"verdict"`
	// Error is the installer's refusal, as it words it.
	Error string `json:"error,omitempty"`
}

// writeVerdict records err (nil: accepted) in file and returns the verdict.
func writeVerdict(t *testing.T, file string, err error) string {
	t.Helper()
	v := installerVerdict{Verdict: "accept"}
	if err != nil {
		v = installerVerdict{Verdict: "reject", Error: err.Error()}
	}
	data, jerr := json.Marshal(v)
	if jerr != nil {
		t.Fatal(jerr)
	}
	if werr := os.WriteFile(file, append(data, '\n'), 0o644); werr != nil {
		t.Fatal(werr)
	}
	return v.Verdict
}

// TestCheckDir is how `bootstrap validate` asks the installer: it renders the profile into a
// directory, runs this binary with -test.run '^TestCheckDir$' and BOOTSTRAP_INSTALLERCHECK_DIR
// naming it, and reads DIR/installer.json; a refusal there is data, not a failure of this test.
// Without the variable (in `make test`) it checks the lab golden files the same way, writes the
// verdict into a temporary directory and requires the installer to accept them.
func TestCheckDir(t *testing.T) {
	if dir := os.Getenv("BOOTSTRAP_INSTALLERCHECK_DIR"); dir != "" {
		got := writeVerdict(t, filepath.Join(dir, verdictFile), check(t, dir))
		t.Logf("%s: the installer's verdict: %s", dir, got)
		return
	}
	out := t.TempDir()
	for _, f := range []string{"install-config.yaml", "agent-config.yaml"} {
		data, err := os.ReadFile(filepath.Join(golden, "lab", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(out, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got := writeVerdict(t, filepath.Join(out, verdictFile), check(t, out)); got != "accept" {
		data, _ := os.ReadFile(filepath.Join(out, verdictFile))
		t.Fatalf("the installer rejects the lab's golden files: %s", data)
	}
	data, err := os.ReadFile(filepath.Join(out, verdictFile))
	if err != nil {
		t.Fatal(err)
	}
	var v installerVerdict
	if err := json.Unmarshal(data, &v); err != nil || v.Verdict != "accept" {
		t.Fatalf("installer.json = %s (%v)", data, err)
	}
}
