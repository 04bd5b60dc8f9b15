package fsroot

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestHostileFiles: a FIFO, a device, a link to a device and a file past its kind's cap are refused
// by every opener, at once (a FIFO without a writer would block an open forever), with the kind
// and the cap named; a plain file within the cap is read.
func TestHostileFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(Profile.Max() + 1); err != nil { // sparse: no disk used
		t.Fatal(err)
	}
	f.Close()
	ok := filepath.Join(dir, "ok")
	if err := os.WriteFile(ok, []byte("fine"), 0o600); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for _, tc := range []struct {
		path string
		want func(error) bool
		text string
	}{
		{fifo, func(err error) bool { return errors.Is(err, ErrNotRegular) }, "FIFO"},
		{"/dev/zero", func(err error) bool { return errors.Is(err, ErrNotRegular) }, "character device"},
		{zero, func(err error) bool { return errors.Is(err, ErrNotRegular) }, "character device"},
		{big, func(err error) bool { var tl *TooLargeError; return errors.As(err, &tl) }, strconv.FormatInt(Profile.Max(), 10)},
	} {
		_, err := ReadFile(tc.path, Profile)
		if !tc.want(err) || !strings.Contains(err.Error(), tc.text) || !strings.Contains(err.Error(), string(Profile)) {
			t.Errorf("ReadFile(%s): %v, want it refused naming %q and the kind", tc.path, err, tc.text)
		}
	}
	for _, p := range []string{fifo, big} {
		if _, err := ReadBeneath(p, Profile); err == nil {
			t.Errorf("ReadBeneath(%s) read it", p)
		}
	}
	if _, err := ReadBeneath(zero, Profile); !errors.Is(err, ErrLink) {
		t.Errorf("ReadBeneath of a link to /dev/zero: %v, want ErrLink", err)
	}
	if _, err := OpenBeneath(fifo, Stream); !errors.Is(err, ErrNotRegular) {
		t.Errorf("OpenBeneath of a FIFO as a stream: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("refusals took %v", d)
	}
	for _, read := range []func(string, Kind) ([]byte, error){ReadFile, ReadBeneath} {
		if b, err := read(ok, Profile); err != nil || string(b) != "fine" {
			t.Errorf("plain file: %q %v", b, err)
		}
	}
}
