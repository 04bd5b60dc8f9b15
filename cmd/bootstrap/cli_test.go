package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
	"github.com/bootstrap-dev/bootstrap/profiles"
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

// `bootstrap version` and `bootstrap --version` print the same line, with the version stamped at
// build time (here as the Makefile does, through the variables -ldflags -X sets).
func TestVersionAgrees(t *testing.T) {
	defer func(v, c, ct string) { version, commit, commitTime = v, c, ct }(version, commit, commitTime)
	version, commit, commitTime = "v0.0.0-20261204084716-ee1f81150313", "ee1f8115031337b9752eb6a516f46f3a21f9b553", "2026-12-04T08:47:16Z"
	_, a, _ := run(t, "version")
	_, b, _ := run(t, "--version")
	want := "bootstrap v0.0.0-20261204084716-ee1f81150313 (commit ee1f81150313 2026-12-04T08:47:16Z, go"
	if a != b || !strings.HasPrefix(a, want) {
		t.Fatalf("version %q and --version %q differ or lack %q", a, b, want)
	}
	_, j, _ := run(t, "version", "-o", "json")
	if !strings.Contains(j, `"version":"v0.0.0-20261204084716-ee1f81150313"`) || !strings.Contains(j, `"commit":"ee1f8115031337b9752eb6a516f46f3a21f9b553"`) {
		t.Fatalf("version -o json: %s", j)
	}
}

// Unknown stages and nodes, and --node on a whole-site stage, exit 1 naming the valid ones, and
// change nothing: no work dir, no journal, no stale stage.
func TestRefuseUnknownStagesAndNodes(t *testing.T) {
	dir := t.TempDir()
	site := writeLabSite(t, dir, "canary-refuse")
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"replay", "boot", "--node", "gpu-9"}, []string{`unknown node gpu-9: the site's nodes are `, "cp-0, cp-1, cp-2, gpu-0"}},
		{[]string{"replay", "mirror", "--node", "cp-0"}, []string{"--node applies to boot only"}},
		{[]string{"replay", "bogus"}, []string{`unknown stage "bogus"`, "preflight, mirror, iso, boot"}},
		{[]string{"run", "--from", "bogus"}, []string{`unknown stage "bogus"`, "preflight, mirror"}},
		{[]string{"run", "--until", "nope"}, []string{`unknown stage "nope"`, "handoff"}},
		{[]string{"run", "--from", "install", "--until", "boot"}, []string{"--from install comes after --until boot"}},
	}
	for _, tc := range tests {
		code, out, errs := run(t, append(tc.args, "-f", site)...)
		if code != exitFailure {
			t.Errorf("%v: exit %d, want %d\n%s%s", tc.args, code, exitFailure, out, errs)
		}
		for _, w := range tc.want {
			if !strings.Contains(errs, w) {
				t.Errorf("%v: stderr lacks %q:\n%s", tc.args, w, errs)
			}
		}
		if _, err := os.Stat(filepath.Join(dir, ".bootstrap")); !os.IsNotExist(err) {
			t.Fatalf("%v created the work dir (%v)", tc.args, err)
		}
	}
}

// Shell completion offers flag values: -o, stages, the profile's nodes, init's profiles,
// report's formats.
func TestCompletionCoversFlagValues(t *testing.T) {
	dir := t.TempDir()
	site := writeLabSite(t, dir, "canary-complete")
	for _, tc := range []struct {
		args []string
		want []string
		not  []string // values the command does not have
	}{
		{[]string{"status", "-o", ""}, []string{"text", "json"}, []string{"md", "html"}},
		{[]string{"report", "-o", ""}, []string{"md", "json", "html"}, []string{"text"}},
		{[]string{"run", "--log-level", ""}, []string{"error", "warn", "info", "debug"}, nil},
		{[]string{"run", "--from", ""}, []string{"preflight", "handoff"}, nil},
		{[]string{"replay", "boot", "-f", site, "--node", ""}, []string{"cp-0\tmaster", "gpu-0\tworker"}, nil},
		{[]string{"upgrade", "run", "-f", site, "--canary", ""}, []string{"gpu-0\tworker"}, []string{"cp-0\tmaster"}},
		{[]string{"init", "--profile", ""}, []string{"lab", "dell-xe7740-h200"}, nil},
		{[]string{"report", "--format", ""}, []string{"md", "json", "html"}, []string{"text"}},
	} {
		_, out, errs := run(t, append([]string{"__complete"}, tc.args...)...)
		for _, w := range tc.want {
			if !strings.Contains(out, w+"\n") {
				t.Errorf("completing %v: %q missing from\n%s%s", tc.args, w, out, errs)
			}
		}
		for _, w := range tc.not {
			if strings.Contains(out, w+"\n") {
				t.Errorf("completing %v offers %q, which the command does not have:\n%s", tc.args, w, out)
			}
		}
	}
}

// validate keeps going after an unknown field and a key written twice: the semantic problems are
// reported with them, at once.
func TestValidateEveryProblemAtOnce(t *testing.T) {
	dir := t.TempDir()
	site := writeLabSite(t, dir, "canary-every")
	b, err := os.ReadFile(site)
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, []byte("bogus: 1\n")...)
	b = []byte(strings.Replace(string(b), "kind: Site\n", "kind: Site\nkind: Site\n", 1))
	write(t, site, b, 0o644)
	if err := os.Remove(filepath.Join(dir, "secrets", "bmc-password")); err != nil {
		t.Fatal(err)
	}
	code, out, errs := run(t, "validate", "-f", site)
	// One missing file named by four nodes is one problem naming every field.
	if n := strings.Count(out, "bmc-password does not exist"); n != 1 ||
		!strings.Contains(out, "also named by: nodes[1].bmc.password.file, nodes[2].bmc.password.file") {
		t.Errorf("the missing bmc-password is reported %d times, or not with every field:\n%s", n, out)
	}
	for _, want := range []string{`unknown field "bogus"`, `field "kind" is written twice`, "bmc-password does not exist"} {
		if !strings.Contains(out, want) {
			t.Errorf("validate lacks %q (exit %d):\n%s%s", want, code, out, errs)
		}
	}
	if code != exitInvalid {
		t.Errorf("exit %d, want %d", code, exitInvalid)
	}
}

// The example profiles' comments name real commands: every `bootstrap ...` they quote resolves to
// a command of this binary, with flags it has.
func TestProfileCommentsNameRealCommands(t *testing.T) {
	quoted := regexp.MustCompile("`(bootstrap [^`]+)`")
	for _, name := range profiles.Names() {
		data, err := profiles.Get(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(data), "\n") {
			_, comment, ok := strings.Cut(line, "#")
			if !ok {
				continue
			}
			for _, m := range quoted.FindAllStringSubmatch(comment, -1) {
				args := strings.Fields(m[1])[1:]
				root := NewRootCmd(&bytes.Buffer{}, &bytes.Buffer{})
				cmd, rest, err := root.Find(args)
				if err != nil || cmd == root {
					t.Errorf("profile %s quotes %q: no such command (%v)", name, m[1], err)
					continue
				}
				if err := cmd.ParseFlags(rest); err != nil {
					t.Errorf("profile %s quotes %q: %v", name, m[1], err)
				}
			}
		}
	}
}
