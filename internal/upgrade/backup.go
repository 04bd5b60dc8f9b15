package upgrade

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/filehash"
	"github.com/bootstrap-dev/bootstrap/internal/fsroot"
	"github.com/bootstrap-dev/bootstrap/internal/gather"
)

// DefaultBackupScript is the cluster's own backup script on every control-plane node (RHCOS,
// OpenShift 4.x): given a directory, it writes snapshot_<time>.db (the etcd snapshot) and
// static_kuberesources_<time>.tar.gz (the static pods' resources of that revision).
const DefaultBackupScript = "/usr/local/bin/cluster-backup.sh"

// BackupOptions say where an etcd backup is taken and where it goes.
type BackupOptions struct {
	// Dialer is the gather stage's SSH: host keys pinned on first contact, a changed key refused.
	Dialer *gather.Dialer
	// Node names the control-plane node; Address is where SSH reaches it (host or host:port).
	Node, Address string
	// Script is the backup script (DefaultBackupScript when empty).
	Script string
	// RemoteDir is the directory the script writes to on the node (one per hop: a directory
	// holding an older backup makes the script keep the older files beside the new ones).
	RemoteDir string
	// Dir is the jump host directory the files are copied to.
	Dir string
	// Reuse: a complete backup found in Dir (its backup.json written after the last file was
	// copied and checked, every file hashing as recorded, the same node) taken less than Reuse
	// ago is returned instead of taking another, so a run killed after the backup and before
	// journaling it does not back up twice. Zero never reuses.
	Reuse time.Duration
}

// DefaultBackupReuse is how old a backup found in the hop's directory may be to stand for the
// hop's (BackupOptions.Reuse): an hour, so a resume soon after a kill reuses it, and a hop
// taken up again later backs the cluster up afresh.
const DefaultBackupReuse = time.Hour

// backupManifest is the file in BackupOptions.Dir that records a finished backup.
const backupManifest = "backup.json"

// BackupFile is one file of a backup as copied to the jump host.
type BackupFile struct {
	Name   string `json:"name"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// Backup is an etcd backup taken on a control-plane node and copied to the jump host.
type Backup struct {
	Node      string       `json:"node"`
	RemoteDir string       `json:"remoteDir"`
	Dir       string       `json:"dir"`
	Files     []BackupFile `json:"files"`
	At        time.Time    `json:"at"`
	// Reused says the backup was found, not taken, by this run (see BackupOptions.Reuse).
	Reused string `json:"reused,omitempty"`
}

// BackupError is a backup that could not be taken or copied: the hop does not start.
type BackupError struct {
	Node string
	Op   string
	Err  error
}

func (e *BackupError) Error() string {
	return fmt.Sprintf("etcd backup on %s: %s: %v", e.Node, e.Op, e.Err)
}

func (e *BackupError) Unwrap() error { return e.Err }

// Remedy says what to check; the hop waits for its backup.
func (e *BackupError) Remedy() string {
	return "check that the node answers over SSH as core with the install key, that " + DefaultBackupScript +
		" runs there (sudo -E " + DefaultBackupScript + " DIR, etcd healthy) and that the jump host has room; then run again: the hop does not start without its backup"
}

// TakeBackup runs the backup script on the node, copies the snapshot and the static resources to
// o.Dir and hashes them; each copy is checked against sha256sum run on the node, so a transfer
// that lost or changed a byte is refused.
func TakeBackup(ctx context.Context, o BackupOptions) (*Backup, error) {
	fail := func(op string, err error) error { return &BackupError{Node: o.Node, Op: op, Err: err} }
	if o.Dialer == nil || o.Address == "" || o.RemoteDir == "" || o.Dir == "" {
		return nil, fail("options", fmt.Errorf("a dialer, the node's address, a remote and a local directory are needed"))
	}
	if b := reuse(o, time.Now()); b != nil {
		return b, nil
	}
	script := o.Script
	if script == "" {
		script = DefaultBackupScript
	}
	const sudo = "sudo -n " // the script and its files need root; core may sudo without a password
	c, err := o.Dialer.Dial(ctx, o.Address)
	if err != nil {
		return nil, fail("connect", err)
	}
	defer c.Close()
	// -E: the script reads the node's etcd environment, as the documented procedure runs it
	if err := c.Run(ctx, sudo+"-E "+shq(script)+" "+shq(o.RemoteDir), io.Discard); err != nil {
		return nil, fail("run "+script, err)
	}
	var ls bytes.Buffer
	if err := c.Run(ctx, sudo+"ls -1 "+shq(o.RemoteDir), &ls); err != nil {
		return nil, fail("list "+o.RemoteDir, err)
	}
	names, err := backupFiles(ls.String())
	if err != nil {
		return nil, fail("list "+o.RemoteDir, err)
	}
	if err := os.MkdirAll(o.Dir, 0o700); err != nil {
		return nil, fail("local directory", err)
	}
	b := &Backup{Node: o.Node, RemoteDir: o.RemoteDir, Dir: o.Dir, At: time.Now().UTC()}
	for _, n := range names {
		remote := o.RemoteDir + "/" + n
		f, err := copyRemote(ctx, c, sudo, remote, filepath.Join(o.Dir, n))
		if err != nil {
			return nil, fail("copy "+remote, err)
		}
		b.Files = append(b.Files, f)
	}
	if err := writeManifest(o.Dir, b); err != nil {
		return nil, fail("record "+backupManifest, err)
	}
	return b, nil
}

// writeManifest records a finished backup in dir (written aside, synced, renamed).
func writeManifest(dir string, b *Backup) error {
	raw, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return err
	}
	p := filepath.Join(dir, backupManifest)
	f, err := os.OpenFile(p+".part", os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(raw)
	if cerr := f.Sync(); err == nil {
		err = cerr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(p+".part", p)
}

// reuse returns the backup recorded in o.Dir when o.Reuse allows it and every file is there as
// recorded; nil otherwise (a new backup is taken).
func reuse(o BackupOptions, now time.Time) *Backup {
	if o.Reuse <= 0 {
		return nil
	}
	raw, err := fsroot.ReadFile(filepath.Join(o.Dir, backupManifest), fsroot.Index) // a plain file, capped, no symlink
	if err != nil {
		return nil
	}
	var b Backup
	if json.Unmarshal(raw, &b) != nil || len(b.Files) == 0 || b.Node != o.Node || b.At.After(now) || now.Sub(b.At) >= o.Reuse {
		return nil
	}
	for _, f := range b.Files {
		if f.Name == "" || f.Name != filepath.Base(f.Name) || f.Name == ".." { // a file of this directory, nothing beside it
			return nil
		}
		sum, size, err := filehash.SHA256(filepath.Join(o.Dir, f.Name))
		if err != nil || sum != f.SHA256 || size != f.Size {
			return nil
		}
	}
	b.Reused = "taken at " + b.At.Format(time.RFC3339) + " by a run stopped before it journaled the backup; its files hash as recorded"
	return &b
}

// backupFiles picks the newest snapshot_*.db and static_kuberesources_*.tar.gz of a listing
// (the script's names carry a sortable time stamp); both must be there.
func backupFiles(listing string) ([]string, error) {
	var snap, static string
	for _, n := range strings.Fields(listing) {
		switch {
		case strings.HasPrefix(n, "snapshot_") && strings.HasSuffix(n, ".db") && n > snap:
			snap = n
		case strings.HasPrefix(n, "static_kuberesources_") && strings.HasSuffix(n, ".tar.gz") && n > static:
			static = n
		}
	}
	if snap == "" || static == "" {
		return nil, fmt.Errorf("the script wrote no snapshot_*.db and static_kuberesources_*.tar.gz pair (found: %s)", strings.Join(strings.Fields(listing), " "))
	}
	out := []string{snap, static}
	sort.Strings(out)
	return out, nil
}

// copyRemote streams a remote file (cat over the SSH session) into local, hashing it, and
// compares the hash with the node's own sha256sum.
func copyRemote(ctx context.Context, c *gather.Client, sudo, remote, local string) (BackupFile, error) {
	f := BackupFile{Name: filepath.Base(local)}
	tmp := local + ".part"
	out, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return f, err
	}
	h := sha256.New()
	cw := &countWriter{w: io.MultiWriter(out, h)}
	err = c.Run(ctx, sudo+"cat "+shq(remote), cw)
	if cerr := out.Sync(); err == nil {
		err = cerr
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return f, err
	}
	f.Size, f.SHA256 = cw.n, hex.EncodeToString(h.Sum(nil))
	var sum bytes.Buffer
	if err := c.Run(ctx, sudo+"sha256sum "+shq(remote), &sum); err != nil {
		os.Remove(tmp)
		return f, err
	}
	if got := strings.Fields(sum.String()); len(got) == 0 || got[0] != f.SHA256 {
		os.Remove(tmp)
		return f, fmt.Errorf("copied %d bytes hashing to %s, the node's sha256sum says %q", f.Size, f.SHA256, strings.TrimSpace(sum.String()))
	}
	return f, os.Rename(tmp, local)
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// shq quotes s for the remote POSIX shell.
func shq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
