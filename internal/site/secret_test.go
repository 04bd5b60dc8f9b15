package site

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const canary = "CANARY-s3cr3t-d41d8cd9"

func TestReadSecret(t *testing.T) {
	dir := t.TempDir()
	private := filepath.Join(dir, "pw")
	open := filepath.Join(dir, "pw-open")
	empty := filepath.Join(dir, "empty")
	for _, f := range []struct {
		path string
		data string
		mode os.FileMode
	}{{private, canary + "\n", 0o600}, {open, canary, 0o644}, {empty, "\n", 0o600}} {
		if err := os.WriteFile(f.path, []byte(f.data), f.mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(f.path, f.mode); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("BOOTSTRAP_TEST_SECRET", canary)

	if b, err := ReadSecret(SecretRef{File: private}); err != nil || string(b) != canary {
		t.Errorf("file: %q %v", b, err)
	}
	if b, err := ReadSecret(SecretRef{Env: "BOOTSTRAP_TEST_SECRET"}); err != nil || string(b) != canary {
		t.Errorf("env: %q %v", b, err)
	}
	for name, ref := range map[string]SecretRef{
		"readable by others": {File: open},
		"empty file":         {File: empty},
		"missing file":       {File: filepath.Join(dir, "nope")},
		"unset env":          {Env: "BOOTSTRAP_TEST_UNSET"},
		"both":               {File: private, Env: "BOOTSTRAP_TEST_SECRET"},
		"none":               {},
	} {
		_, err := ReadSecret(ref)
		if err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		if strings.Contains(err.Error(), canary) {
			t.Errorf("%s: the error contains the secret: %v", name, err)
		}
	}
	if _, err := ReadSecret(SecretRef{File: open}); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("mode error should say chmod 600: %v", err)
	}
	if got := (SecretRef{Env: "X"}).String(); got != "env:X" {
		t.Errorf("String = %q", got)
	}
}

// TestCanaryNeverPrinted puts a canary in every credentials file of the test profile and in an
// inline secret, and checks that neither Validate's problems nor the decoder's errors show it.
func TestCanaryNeverPrinted(t *testing.T) {
	root := copyTestdata(t)
	t.Chdir(filepath.Join(root, "invalid"))
	for _, f := range []string{"../files/secrets/bmc-password", "../files/secrets/auth.json", "../files/secrets/leaky.open"} {
		if err := os.WriteFile(f, []byte(canary), 0o644); err != nil { // 0644: a mode error must not print it either
			t.Fatal(err)
		}
	}
	t.Setenv("TEST_GIT_TOKEN", canary)
	for _, name := range []string{"files.yaml", "unknown-fields.yaml", "gitops.yaml"} {
		text, _ := validateText(t, root, name)
		if strings.Contains(text, canary) || strings.Contains(text, "CANARY-inline") {
			t.Errorf("%s: a secret value is in the output:\n%s", name, text)
		}
	}
}
