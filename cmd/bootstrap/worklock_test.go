package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
)

// TestWorkDirCommandsTakeTheLock: iso, gather and serve write the work dir outside the journal;
// while a run holds the lock each exits 4 naming the holder and writes nothing, and each leaves
// no lock behind when it ends.
func TestWorkDirCommandsTakeTheLock(t *testing.T) {
	dir := t.TempDir()
	site := writeLabSite(t, dir, "canary-worklock")
	work := filepath.Join(dir, ".bootstrap")
	if err := os.MkdirAll(work, 0o700); err != nil {
		t.Fatal(err)
	}
	l, err := pipeline.AcquireLock(work, "run (held by test)")
	if err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadDir(work)
	for _, args := range [][]string{
		{"iso", "-f", site, "--manifests-only"},
		{"gather", "-f", site, "--no-bmc", "--ssh-port", "1"},
		{"serve", "-f", site, "--listen", "127.0.0.1:0"},
	} {
		code, out, errs := run(t, args...)
		if code != exitLocked || !strings.Contains(errs, "run (held by test)") {
			t.Errorf("%s on a locked work dir: exit %d\n%s%s", args[0], code, out, errs)
		}
	}
	if after, _ := os.ReadDir(work); len(after) != len(before) {
		t.Errorf("written while locked: %v -> %v", before, after)
	}
	l.Release()
	run(t, "iso", "-f", site, "--manifests-only")
	if _, err := os.Lstat(filepath.Join(work, pipeline.LockFile)); !os.IsNotExist(err) {
		t.Errorf("iso left its lock: %v", err)
	}
}
