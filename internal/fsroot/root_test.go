package fsroot

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestLinksRefused: a link at any level below the folder is refused by every call, by openat2
// and by the walk used on kernels without it; the file outside is never touched.
func TestLinksRefused(t *testing.T) {
	top := t.TempDir()
	dir, outside := filepath.Join(top, "dir"), filepath.Join(top, "outside")
	for _, d := range []string{filepath.Join(dir, "real"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "f"), []byte("outside"), 0o644); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{"dl": outside, "fl": filepath.Join(outside, "f"), "real/up": "../../outside", "fl2": filepath.Join(outside, "f")} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	isLink := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, ErrLink) {
			t.Errorf("%s: %v, want ErrLink", what, err)
		}
	}
	_, err = r.Open("fl")
	isLink("open fl", err)
	_, err = r.Open("dl/f")
	isLink("open dl/f", err)
	_, err = r.Open("real/up/f")
	isLink("open real/up/f", err)
	_, err = r.Create("dl/new", 0o644)
	isLink("create dl/new", err)
	_, err = r.Open("../outside/f")
	isLink("open ../outside/f", err)
	isLink("mkdirall dl/x", r.MkdirAll("dl/x", 0o755))
	isLink("mkdir dl", r.Mkdir("dl", 0o755))
	_, err = r.Sub("real/up")
	isLink("sub real/up", err)
	if err := r.WriteFile("fl", []byte("new"), 0o644); err != nil {
		t.Errorf("write over a link: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "f")); string(b) != "outside" {
		t.Errorf("written through a link: %q", b)
	}
	if fi, err := r.Lstat("dl"); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("lstat dl: %v %v", fi, err)
	}
	if _, err := r.Open("missing"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("open missing: %v", err)
	}

	// the walk, as on kernels without openat2
	fd := int(r.f.Fd())
	for _, p := range []string{"dl/f", "real/up/f", "fl2"} {
		if _, err := walk(fd, p, unix.O_RDONLY, 0); err != unix.ELOOP && err != unix.ENOTDIR {
			t.Errorf("walk %s: %v, want ELOOP", p, err)
		}
	}
	if _, err := walk(fd, "a/../../x", unix.O_RDONLY, 0); err != unix.EXDEV {
		t.Errorf("walk ..: %v", err)
	}
	nfd, err := walk(fd, "real/new", unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY, 0o644)
	if err != nil {
		t.Fatalf("walk create: %v", err)
	}
	unix.Close(nfd)
	if _, err := os.Stat(filepath.Join(dir, "real", "new")); err != nil {
		t.Error(err)
	}
}
