package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/fsroot"
)

// --plan comes from outside: a FIFO and a file over the plan's cap are refused at once (no
// blocking read, no 16 MiB read into memory), the cap named, exit 1 as the plan's other usage errors.
func TestUpgradePlanFileRefused(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "plan.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "plan.json")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(fsroot.Plan.Max() + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for _, tc := range []struct{ path, want string }{
		{fifo, "not a regular file (a FIFO): a upgrade plan must be a plain file"},
		{big, "16777217 bytes, more than the 16777216 bytes (16 MiB) a upgrade plan may be"},
	} {
		for _, sub := range []string{"preflight", "run"} {
			start := time.Now()
			args := []string{"upgrade", sub, "--plan", tc.path}
			if sub == "run" {
				args = append(args, "--no-etcd-backup", "test")
			}
			code, out, errs := run(t, args...)
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("%s %s: took %s, want a prompt refusal", sub, tc.path, took)
			}
			if code != exitFailure || !strings.Contains(errs, tc.want) {
				t.Errorf("%s %s: exit %d, want %d with %q\n%s%s", sub, tc.path, code, exitFailure, tc.want, out, errs)
			}
		}
	}
}
