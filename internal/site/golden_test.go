package site

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/finding"
)

// testEnv is the environment Validate sees in tests: TEST_GIT_TOKEN is set, nothing else.
func testEnv(name string) (string, bool) {
	if name == "TEST_GIT_TOKEN" {
		return "CANARY-git-token", true
	}
	return "", false
}

// copyTestdata copies testdata/ into a temp dir with the modes git cannot carry: secret fixtures
// 0600, except *.open files (0644, for the mode check). It returns the copy's root.
func copyTestdata(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	err := filepath.WalkDir("testdata", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("testdata", p)
		dst := filepath.Join(root, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		mode := os.FileMode(0o644)
		if (strings.Contains(rel, "secrets"+string(filepath.Separator)) || rel == filepath.Join("files", "ssh", "id_ed25519")) && !strings.HasSuffix(rel, ".open") {
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
	return root
}

// validateText loads and validates one profile and returns what `bootstrap validate` prints,
// with the temp dir replaced by $DIR.
func validateText(t *testing.T, root, file string) (string, finding.List) {
	t.Helper()
	var ps finding.List
	s, err := Load(file)
	if err != nil {
		var ok bool
		if ps, ok = AsProblems(err); !ok {
			t.Fatalf("load %s: %v", file, err)
		}
	} else {
		ps = s.Validate(WithLookupEnv(testEnv))
	}
	var b bytes.Buffer
	if err := ps.Format(&b); err != nil {
		t.Fatal(err)
	}
	return strings.ReplaceAll(b.String(), root, "$DIR"), ps
}

func TestValidProfile(t *testing.T) {
	root := copyTestdata(t)
	t.Chdir(filepath.Join(root, "valid"))
	text, ps := validateText(t, root, "site.yaml")
	if len(ps) != 0 {
		t.Fatalf("valid/site.yaml has problems:\n%s", text)
	}
	s, err := Load("site.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if a := s.Nodes[0].StaticAddresses(); len(a) != 1 || a[0].String() != "10.0.0.11" {
		t.Errorf("StaticAddresses = %v", a)
	}
	if s.ControlPlaneCount() != 3 || s.WorkerCount() != 1 || s.Cluster.Platform != PlatformBaremetal {
		t.Errorf("counts %d/%d platform %q", s.ControlPlaneCount(), s.WorkerCount(), s.Cluster.Platform)
	}
	if bl := s.Day1.ModuleBlacklist; len(bl) != 1 || bl[0].Modules[0] != "irdma" || bl[0].Pools[0] != "worker" {
		t.Errorf("default blacklist for the GPU worker = %+v", bl)
	}
}

// TestInvalidGolden checks each testdata/invalid/*.yaml against its .golden text: every problem
// with file:line:col, field path, message and remedy. -update rewrites the golden files.
func TestInvalidGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/invalid/*.yaml")
	if len(files) < 8 {
		t.Fatalf("want the invalid cases, found %v", files)
	}
	srcDir, _ := filepath.Abs("testdata/invalid")
	root := copyTestdata(t)
	t.Chdir(filepath.Join(root, "invalid"))
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(strings.TrimSuffix(name, ".yaml"), func(t *testing.T) {
			got, ps := validateText(t, root, name)
			if !ps.HasErrors() {
				t.Errorf("%s: no error reported", name)
			}
			if strings.Contains(got, "CANARY") {
				t.Errorf("a secret value leaked into the output:\n%s", got)
			}
			golden := filepath.Join(srcDir, strings.TrimSuffix(name, ".yaml")+".golden")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("output differs from %s (run with -update after checking):\n--- got\n%s--- want\n%s", golden, got, want)
			}
		})
	}
}

// TestMirrorPlatformsAll: platforms: [all] keeps every platform and needs no cluster architecture
// in the list; "all" with other platforms is an error on that entry.
func TestMirrorPlatformsAll(t *testing.T) {
	root := copyTestdata(t)
	t.Chdir(filepath.Join(root, "valid"))
	s, err := Load("site.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s.Mirror.Platforms = []string{"all"}
	if ps := s.Validate(WithLookupEnv(testEnv)); len(ps) != 0 {
		t.Errorf("platforms [all]: %v", ps)
	}
	s.Mirror.Platforms = []string{"linux/arm64", "all"}
	ps := s.Validate(WithLookupEnv(testEnv))
	if len(ps) != 1 || ps[0].Path != "mirror.platforms[1]" || !strings.Contains(ps[0].Message, `"all"`) {
		t.Errorf("platforms [linux/arm64, all]: %v, want one error on mirror.platforms[1]", ps)
	}
}
