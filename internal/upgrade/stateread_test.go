package upgrade_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/fsroot"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade"
)

// A captured state comes from outside: a FIFO (which would block a plain read forever) and a
// file over the cap are refused at once, the cap named.
func TestReadStateRefusesFIFOAndOversized(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "state.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "state.json")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(fsroot.State.Max() + 1); err != nil { // sparse: no disk used
		t.Fatal(err)
	}
	f.Close()
	for _, tc := range []struct {
		path string
		want []string
		is   func(error) bool
	}{
		{fifo, []string{"not a regular file", "captured cluster state", "--state"}, func(err error) bool { return errors.Is(err, fsroot.ErrNotRegular) }},
		{big, []string{"268435457 bytes", "268435456 bytes (256 MiB)", "captured cluster state"}, func(err error) bool {
			var tl *fsroot.TooLargeError
			return errors.As(err, &tl)
		}},
	} {
		start := time.Now()
		_, err := upgrade.ReadState(tc.path)
		if took := time.Since(start); took > 2*time.Second {
			t.Errorf("%s: refused after %s, want at once", tc.path, took)
		}
		if err == nil || !tc.is(err) {
			t.Errorf("%s: %v, want a refusal of its kind", tc.path, err)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error()+" "+remedy(err), w) {
				t.Errorf("%s: %q lacks %q", tc.path, err.Error()+" "+remedy(err), w)
			}
		}
	}
}

func remedy(err error) string {
	var r interface{ Remedy() string }
	if errors.As(err, &r) {
		return r.Remedy()
	}
	return ""
}
