package adversarial

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/bootstrap-dev/bootstrap/internal/fsroot"
	"github.com/bootstrap-dev/bootstrap/internal/mirror"
	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
)

// TestContentJSONLinkToDevZero: a carried archive's content.json that is a link to /dev/zero was
// read whole (memory exhausted); it is refused at once as a link.
func TestContentJSONLinkToDevZero(t *testing.T) {
	dir := t.TempDir()
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "content.json")); err != nil {
		t.Fatal(err)
	}
	err := fast(t, 2*time.Second, "content.json -> /dev/zero", func() error {
		_, err := mirror.ReadContent(filepath.Join(dir, "content.json"))
		return err
	})
	if !errors.Is(err, fsroot.ErrLink) {
		t.Fatalf("content.json -> /dev/zero: %v, want refused as a link", err)
	}
}

// TestContentJSONTooLarge: a content.json past its cap (a sparse file: no disk used) is refused
// before it is read, the kind and the cap named.
func TestContentJSONTooLarge(t *testing.T) {
	path := filepath.Join(t.TempDir(), "content.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	f.Truncate(fsroot.Content.Max() + 1)
	f.Close()
	_, err = mirror.ReadContent(path)
	var tl *fsroot.TooLargeError
	if !errors.As(err, &tl) || !strings.Contains(err.Error(), "content.json") || !strings.Contains(err.Error(), "256 MiB") {
		t.Fatalf("oversized content.json: %v", err)
	}
}

// TestArchivePartFIFO: a FIFO in place of a part blocked the unpack forever; it is refused as not a
// regular file, at once.
func TestArchivePartFIFO(t *testing.T) {
	dir := archive(t, tarWith(t, regular("blobs/sha256/aa"), "x"), 0)
	part := filepath.Join(dir, "mirror_000001.tar")
	os.Remove(part)
	if err := unix.Mkfifo(part, 0o644); err != nil {
		t.Fatal(err)
	}
	err := fast(t, 5*time.Second, "a FIFO part", func() error { _, err := mirror.UnpackArchive(dir); return err })
	if !errors.Is(err, fsroot.ErrNotRegular) || !strings.Contains(err.Error(), "FIFO") {
		t.Fatalf("FIFO part: %v", err)
	}
}

// TestJournalFIFO: a FIFO in place of the journal blocked every command; readers and the runner
// refuse it at once and leave it as it was.
func TestJournalFIFO(t *testing.T) {
	dir := t.TempDir()
	path := pipeline.JournalPath(dir)
	if err := unix.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	for what, f := range map[string]func() error{
		"ReadJournal": func() error { _, _, err := pipeline.ReadJournal(path); return err },
		"OpenJournal": func() error { _, _, err := pipeline.OpenJournal(path); return err },
		"status":      func() error { _, err := (&pipeline.Runner{WorkDir: dir}).Status(); return err },
	} {
		if err := fast(t, 5*time.Second, what, f); !errors.Is(err, fsroot.ErrNotRegular) {
			t.Errorf("%s on a FIFO journal: %v", what, err)
		}
	}
	if fi, err := os.Lstat(path); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: %v %v", fi, err)
	}
}

// TestProfileIsADevice: a site profile, an ISC or a CA file that is a device is refused by kind.
func TestProfileIsADevice(t *testing.T) {
	if _, err := mirror.LoadISC("/dev/zero"); !errors.Is(err, fsroot.ErrNotRegular) ||
		!strings.Contains(err.Error(), string(fsroot.ISC)) {
		t.Errorf("ISC /dev/zero: %v", err)
	}
}
