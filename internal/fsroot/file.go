package fsroot

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Kind names a sort of file read from outside and carries its size cap: a file larger than its
// kind allows is refused with the kind and the cap in the error, before it is read.
type Kind string

// The kinds of files read from outside. Their caps are generous for every real file and small
// enough that a hostile one (a link to /dev/zero, a sparse file of terabytes) cannot exhaust memory.
const (
	Profile  Kind = "site profile"                    // site.yaml
	ISC      Kind = "ImageSetConfiguration"           // isc.yaml
	Content  Kind = "content.json"                    // a disk mirror's or a work dir's image list
	Index    Kind = "archive index"                   // archive.json and OCI index files
	Witness  Kind = "journal witness"                 // journal.head
	LockInfo Kind = "lock file"                       // the work dir's lock
	PEM      Kind = "certificate or key"              // CA bundles, TLS and SSH keys, known_hosts
	Secret   Kind = "credentials file"                // pull secrets, registry auth, BMC passwords
	Manifest Kind = "manifest"                        // YAML/JSON manifests added to the ISO or the cluster
	Log      Kind = "log"                             // bootstrap's own logs and child logs, read back
	StateLog Kind = "work dir state log"              // mirror-blobs.log, mirror-repositories.log: read as a stream
	Stream   Kind = "stream (archive part, ISO, ...)" // read as a stream: no cap here, the reader bounds it
)

// Max is the cap of a kind in bytes; 0 means none (the file is streamed and its reader bounds it).
func (k Kind) Max() int64 {
	switch k {
	case Profile, ISC, Secret:
		return 4 << 20
	case Content, StateLog:
		return 256 << 20
	case Index, Manifest:
		return 64 << 20
	case Witness, LockInfo:
		return 64 << 10
	case PEM:
		return 8 << 20
	case Log:
		return 16 << 20
	}
	return 0
}

// TooLargeError reports a file larger than its kind's cap. Callers branch with errors.As.
type TooLargeError struct {
	Path string
	Kind Kind
	Size int64 // bytes seen (at least Max+1 when the file grew while read)
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s %s is %d bytes, more than the %d bytes (%d MiB) a %s may be: refused before reading it; "+
		"point at the right file", e.Kind, e.Path, e.Size, e.Kind.Max(), e.Kind.Max()>>20, e.Kind)
}

// ErrNotRegular is wrapped by every error for a path that is not a regular file (a FIFO, a
// device, a socket, a folder): such a file could block forever or never end.
var ErrNotRegular = errors.New("not a regular file")

// regular checks that f is a regular file within k's cap and clears O_NONBLOCK (opened so that a
// FIFO cannot block the open itself).
func regular(f *os.File, name string, k Kind) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return &fs.PathError{Op: "open", Path: name, Err: fmt.Errorf("%w (%s): a %s must be a plain file", ErrNotRegular, typeName(fi.Mode()), k)}
	}
	if m := k.Max(); m > 0 && fi.Size() > m {
		return &TooLargeError{Path: name, Kind: k, Size: fi.Size()}
	}
	return unix.SetNonblock(int(f.Fd()), false)
}

func typeName(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m.IsDir():
		return "a folder"
	}
	return m.Type().String()
}

// OpenFile opens the regular file at path for reading, following links on the way and at its
// end (a file the operator named: a CA bundle in /etc/ssl is often a link). A FIFO, device,
// socket or folder is refused without blocking, as is a file larger than k's cap.
func OpenFile(path string, k Kind) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	if err := regular(f, path, k); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// ReadFile reads the regular file at path (OpenFile), at most k's cap.
func ReadFile(path string, k Kind) ([]byte, error) {
	f, err := OpenFile(path, k)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readCapped(f, path, k)
}

// ReadBeneath reads the regular file at path without following a link at its last element: the
// folder holding it is the caller's choice, the file is a peer's (a carried content.json, a
// work dir's witness). Otherwise as ReadFile.
func ReadBeneath(path string, k Kind) ([]byte, error) {
	r, err := Open(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return r.ReadKind(filepath.Base(path), k)
}

// OpenBeneath opens path for reading as ReadBeneath does; the caller streams it.
func OpenBeneath(path string, k Kind) (*os.File, error) {
	r, err := Open(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return r.OpenKind(filepath.Base(path), k)
}

// OpenKind opens the regular file rel beneath the folder, within k's cap (no link followed, a
// FIFO or device refused without blocking).
func (r *Root) OpenKind(rel string, k Kind) (*os.File, error) {
	f, err := r.OpenFile(rel, os.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	if err := regular(f, r.Name(rel), k); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// ReadKind reads the regular file rel beneath the folder, at most k's cap.
func (r *Root) ReadKind(rel string, k Kind) ([]byte, error) {
	f, err := r.OpenKind(rel, k)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readCapped(f, r.Name(rel), k)
}

// readCapped reads f whole, refusing it when it grew past k's cap after it was opened.
func readCapped(f *os.File, name string, k Kind) ([]byte, error) {
	m := k.Max()
	if m == 0 {
		return io.ReadAll(f)
	}
	b, err := io.ReadAll(io.LimitReader(f, m+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > m {
		return nil, &TooLargeError{Path: name, Kind: k, Size: int64(len(b))}
	}
	return b, nil
}

// Free is the room left to an unprivileged writer on the folder's file system, in bytes.
func (r *Root) Free() (int64, error) {
	var st unix.Statfs_t
	if err := unix.Fstatfs(r.fd(), &st); err != nil {
		return 0, &fs.PathError{Op: "statfs", Path: r.name, Err: err}
	}
	return int64(st.Bavail) * st.Bsize, nil
}
