package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
)

// run executes the CLI with a fresh root command and returns the exit code and outputs.
func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Execute(args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	site := writeLabSite(t, dir, "canary-not-used")
	bad := filepath.Join(dir, "bad.yaml")
	write(t, bad, []byte("apiVersion: bootstrap.openshift.io/v1alpha1\nkind: Site\nbogus: 1\n"), 0o644)

	tests := []struct {
		name string
		args []string
		code int
		want string // in stdout+stderr
	}{
		{"valid profile", []string{"validate", "-f", site}, exitOK, ""},
		{"unknown field", []string{"validate", "-f", bad}, exitInvalid, "bad.yaml:3:1"},
		{"run on invalid profile", []string{"run", "-f", bad}, exitInvalid, "bogus"},
		{"no profile", []string{"run"}, exitFailure, "pass -f site.yaml"},
		{"bad output", []string{"status", "-o", "xml"}, exitFailure, "use text or json"},
		{"unknown stage", []string{"replay", "nosuchstage", "-f", site}, exitFailure, "nosuchstage"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := run(t, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, out, errs)
			}
			if !strings.Contains(out+errs, tc.want) {
				t.Fatalf("output lacks %q:\n%s%s", tc.want, out, errs)
			}
		})
	}
}

// A second run on a locked work dir exits 4 and names the holder.
func TestRunLockedExits4(t *testing.T) {
	dir := t.TempDir()
	site := writeLabSite(t, dir, "canary-lock")
	work := filepath.Join(dir, ".bootstrap")
	if err := os.MkdirAll(work, 0o700); err != nil {
		t.Fatal(err)
	}
	l, err := pipeline.AcquireLock(work, "run (held by test)")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	code, out, errs := run(t, "run", "-f", site)
	if code != exitLocked {
		t.Fatalf("exit %d, want %d\n%s%s", code, exitLocked, out, errs)
	}
	host, _ := os.Hostname()
	for _, want := range []string{fmt.Sprint(os.Getpid()), host} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr does not name the holder (%q):\n%s", want, errs)
		}
	}
}

// The canary placed in every secret file never reaches the journal, the log, status, report or
// JSON output.
func TestCanaryNeverLeaks(t *testing.T) {
	const canary = "CANARY-s3cr3t-7f3a"
	dir := t.TempDir()
	site := writeLabSite(t, dir, canary)
	var seen []string
	for _, args := range [][]string{
		{"validate", "-f", site, "-o", "json"},
		{"plan", "-f", site},
		{"plan", "-f", site, "-o", "json"},
		{"run", "-f", site, "-o", "json", "--until", "preflight"},
		{"run", "-f", site, "--until", "preflight"},
		{"status", "-f", site},
		{"status", "-f", site, "-o", "json"},
		{"report", "-f", site},
		{"report", "-f", site, "--format", "json"},
	} {
		_, out, errs := run(t, args...)
		seen = append(seen, out, errs)
	}
	_ = filepath.WalkDir(filepath.Join(dir, ".bootstrap"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			seen = append(seen, string(b))
		}
		return nil
	})
	for _, s := range seen {
		if strings.Contains(s, canary) {
			t.Fatalf("canary leaked:\n%s", s)
		}
	}
}
