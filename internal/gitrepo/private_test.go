package gitrepo

import (
	"os"
	"testing"
)

// With no work dir, Prove's private folder goes into the shared temporary directory, whose mode
// must stay as it is (a chmod to 0700 of /tmp, as root, broke every other user on the machine).
func TestPrivateDirLeavesSharedTempAlone(t *testing.T) {
	shared := t.TempDir()
	if err := os.Chmod(shared, os.ModeSticky|0o777); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", shared)
	dir, err := privateDir(privateRoot(""))
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	fi, err := os.Stat(shared)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode() & (os.ModePerm | os.ModeSticky); got != 0o777|os.ModeSticky {
		t.Fatalf("shared temporary directory is now %v, want drwxrwxrwt", fi.Mode())
	}
	pi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if pi.Mode().Perm() != 0o700 {
		t.Fatalf("private folder is %v, want 0700", pi.Mode().Perm())
	}
}
