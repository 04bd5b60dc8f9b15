package harness

import (
	"os"
	"path/filepath"
	"testing"
)

// A TMPDIR inside a private folder must not be where the nodes' shell goes: user core could not
// traverse to it.
func TestNodeBinReachableFromPrivateTMPDIR(t *testing.T) {
	private := filepath.Join(t.TempDir(), "private")
	if err := os.MkdirAll(filepath.Join(private, "tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(private, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", filepath.Join(private, "tmp"))
	if traversable(os.TempDir()) {
		t.Fatalf("%s reported traversable below a 0700 folder", os.TempDir())
	}
	dir, shell, err := writeNodeBin()
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if !traversable(filepath.Dir(shell)) {
		t.Fatalf("node shell %s is not reachable by other users", shell)
	}
	if rel, err := filepath.Rel(private, shell); err == nil && !filepath.IsAbs(rel) && rel[:2] != ".." {
		t.Fatalf("node shell %s was written below the private TMPDIR", shell)
	}
}
