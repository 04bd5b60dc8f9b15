package site

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
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

// TestSecretFileLimits: a named pipe and a giant file in place of the BMC password are refused
// by validation (naming the field) and by ReadSecret at once: no read waits on the pipe, none
// takes the giant file into memory. A too-short BMC password is a warning naming the risk.
func TestSecretFileLimits(t *testing.T) {
	for _, c := range []struct {
		name, want string
		plant      func(path string) error
	}{
		{"fifo", "not a regular file", func(p string) error { return syscall.Mkfifo(p, 0o600) }},
		{"giant", "more than the 4096 bytes", func(p string) error {
			return os.WriteFile(p, bytes.Repeat([]byte("a"), MaxSecretSize+1), 0o600)
		}},
		// A short BMC password (a factory default) is a warning naming the risk, not a refusal.
		{"short", "6 characters: values shorter than 8 are not scrubbed from output", func(p string) error { return os.WriteFile(p, []byte("calvin\n"), 0o600) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := copyTestdata(t)
			pw := filepath.Join(root, "files", "secrets", "bmc-password")
			if err := os.Remove(pw); err != nil {
				t.Fatal(err)
			}
			if err := c.plant(pw); err != nil {
				t.Fatal(err)
			}
			t.Chdir(filepath.Join(root, "valid"))
			text, ps := validateText(t, root, "site.yaml")
			if (Invalid(ps) == nil) != (c.name == "short") || !strings.Contains(text, "nodes[0].bmc.password") || !strings.Contains(text, c.want) {
				t.Errorf("validate:\n%s\nwant a problem on nodes[0].bmc.password saying %q (a warning only when short)", text, c.want)
			}
			_, err := ReadSecret(SecretRef{File: pw})
			if c.name != "short" && (err == nil || !strings.Contains(err.Error(), c.want)) {
				t.Errorf("ReadSecret: %v, want %q", err, c.want)
			}
		})
	}
	// an auth file may be larger than a password, within its own limit
	big := filepath.Join(t.TempDir(), "auth.json")
	if err := os.WriteFile(big, bytes.Repeat([]byte(" "), MaxSecretFileSize+1), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadSecretFile(big); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Errorf("giant auth file: %v", err)
	}
}
