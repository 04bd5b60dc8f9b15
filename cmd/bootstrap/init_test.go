package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bootstrap-dev/bootstrap/profiles"
)

func TestInitWritesProfile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "site.yaml")
	out, err := testRoot(t, newInitCmd(), "init", "--profile", "dell-xe7740-h200", "-f", file)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := profiles.Get("dell-xe7740-h200")
	got, err := os.ReadFile(file)
	if err != nil || string(got) != string(want) {
		t.Fatalf("written profile differs from the embedded one (err %v)", err)
	}
	for _, s := range []string{"wrote " + file, "missing  secret  secrets/idrac-password", "bootstrap validate -f " + file} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q:\n%s", s, out)
		}
	}

	// A second init refuses and leaves the edited file alone.
	if err := os.WriteFile(file, []byte("edited\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = testRoot(t, newInitCmd(), "init", "--profile", "sno", "-f", file)
	if err == nil || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("want a refusal naming --force, got %v", err)
	}
	if b, _ := os.ReadFile(file); string(b) != "edited\n" {
		t.Fatal("the existing file was changed")
	}
	// --force replaces it.
	if _, err := testRoot(t, newInitCmd(), "init", "--profile", "sno", "-f", file, "--force"); err != nil {
		t.Fatal(err)
	}
	sno, _ := profiles.Get("sno")
	if b, _ := os.ReadFile(file); string(b) != string(sno) {
		t.Fatal("--force did not write the profile")
	}
	if leftovers, _ := filepath.Glob(filepath.Join(dir, ".site-*")); len(leftovers) != 0 {
		t.Fatalf("temp files left: %v", leftovers)
	}
}

func TestInitErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := testRoot(t, newInitCmd(), "init", "-f", filepath.Join(dir, "a.yaml")); err == nil || !strings.Contains(err.Error(), "lab") {
		t.Fatalf("missing --profile should list the profiles, got %v", err)
	}
	if _, err := testRoot(t, newInitCmd(), "init", "--profile", "../etc/passwd", "-f", filepath.Join(dir, "b.yaml")); err == nil {
		t.Fatal("a path as profile name must fail")
	}
	out, err := testRoot(t, newInitCmd(), "init", "--list")
	if err != nil || strings.Join(strings.Fields(out), ",") != strings.Join(profiles.Names(), ",") {
		t.Fatalf("--list: %q %v", out, err)
	}
}
