package fsroot

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// ErrLink is wrapped by every error for a path that crosses a symbolic link or would leave the
// folder; callers branch on it with errors.Is.
var ErrLink = errors.New("crosses a symbolic link or leaves the folder")

// Root is a folder opened once. Its methods take slash-separated paths relative to it.
type Root struct {
	f    *os.File
	name string
}

// Open opens the folder at dir.
func Open(dir string) (*Root, error) {
	f, err := os.OpenFile(dir, os.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, err
	}
	return &Root{f: f, name: dir}, nil
}

// Name is the folder's path as given to Open, joined with rel.
func (r *Root) Name(rel string) string { return filepath.Join(r.name, filepath.FromSlash(rel)) }

// Close releases the folder's descriptor.
func (r *Root) Close() error { return r.f.Close() }

func (r *Root) fd() int { return int(r.f.Fd()) }

// clean refuses absolute paths and any ".." component and returns rel cleaned ("." for the root).
func clean(rel string) (string, error) {
	if strings.ContainsRune(rel, 0) || path.IsAbs(rel) || filepath.IsAbs(rel) {
		return "", fmt.Errorf("%q: %w", rel, ErrLink)
	}
	c := path.Clean(filepath.ToSlash(rel))
	for _, part := range strings.Split(c, "/") {
		if part == ".." {
			return "", fmt.Errorf("%q: %w", rel, ErrLink)
		}
	}
	return c, nil
}

func (r *Root) pathErr(op, rel string, err error) error {
	if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EXDEV) {
		err = fmt.Errorf("%w (%v)", ErrLink, err)
	}
	return &fs.PathError{Op: op, Path: r.Name(rel), Err: err}
}

// openat opens rel beneath dirfd without following any link on the way or at its end.
func openat(dirfd int, rel string, flags int, mode uint32) (int, error) {
	how := unix.OpenHow{Flags: uint64(flags | unix.O_CLOEXEC | unix.O_NOFOLLOW), Mode: uint64(mode),
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS}
	for {
		fd, err := unix.Openat2(dirfd, rel, &how)
		if err == unix.EINTR || err == unix.EAGAIN {
			continue
		}
		if err == unix.ENOSYS {
			return walk(dirfd, rel, flags, mode)
		}
		return fd, err
	}
}

// walk is openat2's resolution done by hand (kernels before 5.6): every directory on the way is
// opened O_NOFOLLOW relative to the one before.
func walk(dirfd int, rel string, flags int, mode uint32) (int, error) {
	parts := strings.Split(rel, "/")
	for _, p := range parts {
		if p == ".." {
			return -1, unix.EXDEV
		}
	}
	cur := dirfd
	defer func() {
		if cur != dirfd {
			unix.Close(cur)
		}
	}()
	for i, p := range parts {
		last := i == len(parts)-1
		fl, m := unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(0)
		if last {
			fl, m = flags|unix.O_NOFOLLOW|unix.O_CLOEXEC, mode
		}
		fd, err := unix.Openat(cur, p, fl, m)
		if err != nil {
			if err == unix.ENOTDIR && !last {
				var st unix.Stat_t
				if unix.Fstatat(cur, p, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
					err = unix.ELOOP
				}
			}
			return -1, err
		}
		if cur != dirfd {
			unix.Close(cur)
		}
		cur = fd
	}
	fd := cur
	cur = dirfd
	return fd, nil
}

// parent opens the folder holding rel (O_PATH) and returns it with rel's last element.
func (r *Root) parent(op, rel string) (int, string, error) {
	c, err := clean(rel)
	if err != nil {
		return -1, "", &fs.PathError{Op: op, Path: r.Name(rel), Err: err}
	}
	if c == "." {
		return -1, "", &fs.PathError{Op: op, Path: r.Name(rel), Err: fs.ErrInvalid}
	}
	dir, base := path.Split(c)
	if dir == "" {
		dir = "."
	}
	fd, err := openat(r.fd(), strings.TrimSuffix(dir, "/"), unix.O_PATH|unix.O_DIRECTORY, 0)
	if err != nil {
		return -1, "", r.pathErr(op, rel, err)
	}
	return fd, base, nil
}

// OpenFile opens rel with flags (os.O_*); O_NOFOLLOW is always added.
func (r *Root) OpenFile(rel string, flags int, perm os.FileMode) (*os.File, error) {
	c, err := clean(rel)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: r.Name(rel), Err: err}
	}
	fd, err := openat(r.fd(), c, flags, uint32(perm.Perm()))
	if err != nil {
		return nil, r.pathErr("open", rel, err)
	}
	return os.NewFile(uintptr(fd), r.Name(rel)), nil
}

// Open opens the regular file rel for reading (a FIFO or device is refused without blocking).
func (r *Root) Open(rel string) (*os.File, error) { return r.OpenKind(rel, Stream) }

// Create creates rel, which must not exist (not even as a link).
func (r *Root) Create(rel string, perm os.FileMode) (*os.File, error) {
	return r.OpenFile(rel, os.O_CREATE|os.O_EXCL|os.O_WRONLY, perm)
}

// ReadFile reads the regular file rel, at most limit bytes (an error past it).
func (r *Root) ReadFile(rel string, limit int64) ([]byte, error) {
	f, err := r.Open(rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err == nil && int64(len(b)) > limit {
		err = &fs.PathError{Op: "read", Path: r.Name(rel), Err: fmt.Errorf("larger than %d bytes", limit)}
	}
	return b, err
}

// WriteFile writes rel whole: into a fresh temporary file beside it, synced, then renamed over
// rel (a link at rel is replaced, never followed).
func (r *Root) WriteFile(rel string, data []byte, perm os.FileMode) error {
	tmp := rel + ".tmp"
	if err := r.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	f, err := r.Create(tmp, perm)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return r.Rename(tmp, rel)
}

// Lstat describes rel itself (a link is described, not followed).
func (r *Root) Lstat(rel string) (fs.FileInfo, error) {
	if c, err := clean(rel); err == nil && c == "." {
		return r.f.Stat()
	}
	pfd, base, err := r.parent("lstat", rel)
	if err != nil {
		return nil, err
	}
	defer unix.Close(pfd)
	fd, err := unix.Openat(pfd, base, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, r.pathErr("lstat", rel, err)
	}
	f := os.NewFile(uintptr(fd), r.Name(rel))
	defer f.Close()
	return f.Stat()
}

// Mkdir creates the folder rel, or accepts it when it exists as a folder (never as a link).
func (r *Root) Mkdir(rel string, perm os.FileMode) error {
	pfd, base, err := r.parent("mkdir", rel)
	if err != nil {
		return err
	}
	defer unix.Close(pfd)
	err = unix.Mkdirat(pfd, base, uint32(perm.Perm()))
	if err == unix.EEXIST {
		var st unix.Stat_t
		if err := unix.Fstatat(pfd, base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return r.pathErr("mkdir", rel, err)
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFDIR:
			return nil
		case unix.S_IFLNK:
			return r.pathErr("mkdir", rel, unix.ELOOP)
		}
		return r.pathErr("mkdir", rel, unix.ENOTDIR)
	}
	if err != nil {
		return r.pathErr("mkdir", rel, err)
	}
	return nil
}

// MkdirAll creates rel and every folder above it that is missing; an existing link on the way
// is refused.
func (r *Root) MkdirAll(rel string, perm os.FileMode) error {
	c, err := clean(rel)
	if err != nil {
		return &fs.PathError{Op: "mkdir", Path: r.Name(rel), Err: err}
	}
	if c == "." {
		return nil
	}
	parts := strings.Split(c, "/")
	for i := range parts {
		if err := r.Mkdir(strings.Join(parts[:i+1], "/"), perm); err != nil {
			return err
		}
	}
	return nil
}

// Sub opens the folder rel as a Root of its own.
func (r *Root) Sub(rel string) (*Root, error) {
	c, err := clean(rel)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: r.Name(rel), Err: err}
	}
	fd, err := openat(r.fd(), c, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err == unix.ENOTDIR {
		if fi, lerr := r.Lstat(c); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			err = unix.ELOOP
		}
	}
	if err != nil {
		return nil, r.pathErr("open", rel, err)
	}
	return &Root{f: os.NewFile(uintptr(fd), r.Name(rel)), name: r.Name(rel)}, nil
}

// Rename renames oldRel to newRel, both beneath the folder; a link at newRel is replaced.
func (r *Root) Rename(oldRel, newRel string) error {
	ofd, obase, err := r.parent("rename", oldRel)
	if err != nil {
		return err
	}
	defer unix.Close(ofd)
	nfd, nbase, err := r.parent("rename", newRel)
	if err != nil {
		return err
	}
	defer unix.Close(nfd)
	if err := unix.Renameat(ofd, obase, nfd, nbase); err != nil {
		return &os.LinkError{Op: "rename", Old: r.Name(oldRel), New: r.Name(newRel), Err: err}
	}
	return nil
}

// Remove removes the file (or link, or empty folder) rel itself.
func (r *Root) Remove(rel string) error {
	pfd, base, err := r.parent("remove", rel)
	if err != nil {
		return err
	}
	defer unix.Close(pfd)
	err = unix.Unlinkat(pfd, base, 0)
	if err == unix.EISDIR || err == unix.EPERM {
		err = unix.Unlinkat(pfd, base, unix.AT_REMOVEDIR)
	}
	if err != nil {
		return r.pathErr("remove", rel, err)
	}
	return nil
}
