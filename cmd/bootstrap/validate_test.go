package main

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// testRoot mirrors the root's global flags (-f/--file, --output) so the commands are tested the
// way they are wired, and returns buffers for stdout and stderr.
func testRoot(t *testing.T, sub *cobra.Command, args ...string) (stdout string, err error) {
	t.Helper()
	root := &cobra.Command{Use: "bootstrap", SilenceUsage: true, SilenceErrors: true}
	root.PersistentFlags().StringP("file", "f", "", "the site profile")
	root.PersistentFlags().StringP("output", "o", "text", "text or json")
	root.AddCommand(sub)
	var out, errb bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errb)
	root.SetArgs(args)
	err = root.Execute()
	return out.String(), err
}

// siteTestdata copies internal/site/testdata with the secret modes git cannot carry (0600,
// *.open files 0644), like the site package's own golden test, and returns the copy's root.
func siteTestdata(t *testing.T) (root, src string) {
	t.Helper()
	src = filepath.Join("..", "..", "internal", "site", "testdata")
	root = t.TempDir()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		dst := filepath.Join(root, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		mode := os.FileMode(0o644)
		if (strings.Contains(rel, "secrets/") || rel == "files/ssh/id_ed25519") && !strings.HasSuffix(rel, ".open") {
			mode = 0o600
		}
		if err := os.WriteFile(dst, b, mode); err != nil {
			return err
		}
		return os.Chmod(dst, mode)
	})
	if err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs(src)
	return root, abs
}

// TestValidateInvalidGolden: `bootstrap validate -f FILE` on each invalid profile prints exactly
// the golden text and returns the typed invalid error (exit code 3 in the root).
func TestValidateInvalidGolden(t *testing.T) {
	t.Setenv("TEST_GIT_TOKEN", "CANARY-git-token")
	t.Setenv("UNSET_GIT_TOKEN", "")
	os.Unsetenv("UNSET_GIT_TOKEN")
	root, src := siteTestdata(t)
	files, _ := filepath.Glob(filepath.Join(src, "invalid", "*.yaml"))
	if len(files) == 0 {
		t.Fatal("no invalid profiles")
	}
	t.Chdir(filepath.Join(root, "invalid"))
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			out, err := testRoot(t, newValidateCmd(), "validate", "-f", name)
			if !site.IsInvalid(err) {
				t.Fatalf("want the typed invalid error, got %v", err)
			}
			want, rerr := os.ReadFile(strings.TrimSuffix(f, ".yaml") + ".golden")
			if rerr != nil {
				t.Fatal(rerr)
			}
			if got := strings.ReplaceAll(out, root, "$DIR"); got != string(want) {
				t.Errorf("output differs from golden:\n--- got\n%s--- want\n%s", got, want)
			}
			if strings.Contains(out+err.Error(), "CANARY") {
				t.Error("a secret value leaked")
			}
		})
	}
}

func TestValidateValidAndFlags(t *testing.T) {
	t.Setenv("TEST_GIT_TOKEN", "CANARY-git-token")
	root, _ := siteTestdata(t)
	t.Chdir(filepath.Join(root, "valid"))

	out, err := testRoot(t, newValidateCmd(), "validate", "-f", "site.yaml")
	if err != nil || !strings.HasPrefix(out, "site.yaml: valid\ndefaults chosen for what the profile leaves out") ||
		!strings.Contains(out, "\n  cluster.networking.clusterNetwork: 10.128.0.0/14 hostPrefix 23") ||
		!strings.Contains(out, "\n  cluster.networking.serviceNetwork: 172.30.0.0/16") || strings.Contains(out, "machineNetwork") {
		t.Fatalf("valid profile: out=%q err=%v", out, err)
	}
	// The global -f before the subcommand, and a positional file, both select the profile.
	if _, err := testRoot(t, newValidateCmd(), "-f", "../invalid/header.yaml", "validate"); !site.IsInvalid(err) {
		t.Fatalf("global -f not honoured: %v", err)
	}
	if _, err := testRoot(t, newValidateCmd(), "validate", "../invalid/header.yaml"); !site.IsInvalid(err) {
		t.Fatalf("positional file not honoured: %v", err)
	}
	// A missing profile is a plain failure, not an invalid profile.
	if _, err := testRoot(t, newValidateCmd(), "validate", "-f", "nope.yaml"); err == nil || site.IsInvalid(err) {
		t.Fatalf("missing file: want a plain error, got %v", err)
	}
}

func TestValidateJSONAndAllowMissing(t *testing.T) {
	t.Setenv("TEST_GIT_TOKEN", "test-git-token")
	root, _ := siteTestdata(t)
	t.Chdir(filepath.Join(root, "invalid"))
	code, out, _ := run(t, "validate", "-f", "files.yaml", "--output", "json")
	if code != exitInvalid {
		t.Fatalf("exit %d, want %d", code, exitInvalid)
	}
	kinds, res, data := jsonLinesOf(t, out)
	var rep struct {
		Valid            bool
		Errors, Warnings int
	}
	if err := json.Unmarshal(data, &rep); err != nil || res.OK || res.ExitCode != exitInvalid {
		t.Fatalf("result %+v: %v", res, err)
	}
	if rep.Valid || rep.Errors == 0 || len(kinds) != rep.Errors+rep.Warnings+1 || kinds[0] != "problem" {
		t.Fatalf("report %+v, lines %v: want one problem line per problem", rep, kinds)
	}
	var p struct {
		File   string
		Line   int
		Column int
		Path   string
		Status string
		Remedy string
	}
	if err := json.Unmarshal([]byte(out[:strings.IndexByte(out, '\n')]), &p); err != nil {
		t.Fatal(err)
	}
	if p.File != "files.yaml" || p.Line == 0 || p.Column == 0 || p.Path == "" || p.Remedy == "" || p.Status != "fail" {
		t.Errorf("first problem lacks position, path or remedy: %+v", p)
	}
	// --allow-missing-files turns the missing CA into a warning but keeps the mode error.
	out, err := testRoot(t, newValidateCmd(), "validate", "-f", "files.yaml", "--allow-missing-files")
	if !site.IsInvalid(err) || !strings.Contains(out, "warning: registry.caFile") || !strings.Contains(out, "chmod 600") {
		t.Fatalf("allow-missing-files: err=%v\n%s", err, out)
	}
}

// TestExecuteExitCodes drives the real entry point (Execute, as main calls it): validate on
// each invalid profile prints the golden text and exits 3; a valid one exits 0; init works
// under the root's global -f/--file and -o/--output flags.
func TestExecuteExitCodes(t *testing.T) {
	t.Setenv("TEST_GIT_TOKEN", "test-git-token")
	os.Unsetenv("UNSET_GIT_TOKEN")
	root, src := siteTestdata(t)
	t.Chdir(filepath.Join(root, "invalid"))
	run := func(args ...string) (string, string, int) {
		var out, errb bytes.Buffer
		code := Execute(args, strings.NewReader(""), &out, &errb)
		return out.String(), errb.String(), code
	}
	files, _ := filepath.Glob(filepath.Join(src, "invalid", "*.yaml"))
	for _, f := range files {
		name := filepath.Base(f)
		out, stderr, code := run("validate", "-f", name)
		want, _ := os.ReadFile(strings.TrimSuffix(f, ".yaml") + ".golden")
		if code != exitInvalid || strings.ReplaceAll(out, root, "$DIR") != string(want) {
			t.Errorf("%s: exit %d (want 3), stdout differs from golden: %v\n%s%s", name, code, out != string(want), out, stderr)
		}
	}
	if out, _, code := run("validate", "-f", "header.yaml", "-o", "json"); code != exitInvalid || !strings.Contains(out, `"valid":false`) {
		t.Errorf("validate -o json: exit %d\n%s", code, out)
	}
	if out, _, code := run("validate", "-f", "../valid/site.yaml", "-o", "json"); code != exitOK ||
		!strings.Contains(out, `"defaults":[{"path":"cluster.release.architecture","value":"amd64"}`) ||
		!strings.Contains(out, `{"path":"cluster.networking.clusterNetwork","value":"10.128.0.0/14 hostPrefix 23"`) {
		t.Errorf("validate -o json names no defaults: exit %d\n%s", code, out)
	}
	if out, stderr, code := run("-f", "../valid/site.yaml", "validate"); code != exitOK || !strings.HasPrefix(out, "../valid/site.yaml: valid\n") {
		t.Errorf("global -f: exit %d\n%s%s", code, out, stderr)
	}
	dst := filepath.Join(t.TempDir(), "site.yaml")
	if out, stderr, code := run("init", "--profile", "lab", "-f", dst); code != exitOK {
		t.Errorf("init: exit %d\n%s%s", code, out, stderr)
	}
	if _, _, code := run("init", "--profile", "lab", "-f", dst); code != exitFailure {
		t.Errorf("init over an existing file: exit %d, want 1", code)
	}
}
