package pipeline

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/fsroot"
)

// LockInfo is what the lock file holds: who runs, since when, doing what.
type LockInfo struct {
	Host    string    `json:"host"`
	PID     int       `json:"pid"`
	Started time.Time `json:"started"`
	Command string    `json:"command,omitempty"`
	// BootID and ProcStart (Linux) make staleness provable: a different boot, or a pid now owned
	// by a process that started at another time, cannot be the holder.
	BootID    string `json:"bootID,omitempty"`
	ProcStart string `json:"procStart,omitempty"`
}

// String names the holder for people: pid, host, start time and command.
func (i LockInfo) String() string {
	s := fmt.Sprintf("pid %d on %s since %s", i.PID, i.Host, i.Started.Local().Format(time.RFC3339))
	if i.Command != "" {
		s += fmt.Sprintf(" (%s)", i.Command)
	}
	return s
}

// LockedError reports a work dir locked by another run. cmd/ maps it to exit code 4.
type LockedError struct {
	Path   string
	Holder LockInfo
	// Stale is true when the holder looks dead but that cannot be proven here (another host,
	// unreadable lock); Reason then says why and Error says how to clear it.
	Stale  bool
	Reason string
}

// Error names the holder and says how to proceed.
func (e *LockedError) Error() string {
	if e.Stale {
		return fmt.Sprintf("work dir is locked by %s, which may be stale: %s; if no bootstrap runs there, "+
			"remove %s and run again", e.holder(), e.Reason, e.Path)
	}
	why := ""
	if e.Reason != "" {
		why = " (" + e.Reason + ")"
	}
	return fmt.Sprintf("work dir is locked by another run: %s%s; wait for it to finish or stop it "+
		"(%s)", e.holder(), why, e.Path)
}

func (e *LockedError) holder() string {
	if e.Holder.PID == 0 {
		return "an unknown holder"
	}
	return e.Holder.String()
}

// Lock is a held run lock. Release it when the run ends.
type Lock struct {
	path string
	info LockInfo
	// TookOver describes the provably stale lock this one replaced, or is empty.
	TookOver string
}

// Info returns what the lock file says about this run.
func (l *Lock) Info() LockInfo { return l.info }

// AcquireLock creates workDir/lock with O_EXCL, holding host, pid, start time and command.
// When a lock exists it returns a *LockedError naming the holder, except when the lock is
// provably stale on this host: written by this host in an earlier boot, or by a pid that is dead
// (or reused by a process that started later). Such a lock is taken over and Lock.TookOver says
// so; the check and the takeover happen under an flock on workDir/lock.guard, so two runs that
// find the same stale lock never both win.
func AcquireLock(workDir, command string) (*Lock, error) {
	if err := makeDir(workDir); err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	path := filepath.Join(workDir, LockFile)
	guard, err := os.OpenFile(path+".guard", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	defer guard.Close()
	if err := syscall.Flock(int(guard.Fd()), syscall.LOCK_EX); err != nil {
		return nil, fmt.Errorf("lock: guard: %w", err)
	}
	defer syscall.Flock(int(guard.Fd()), syscall.LOCK_UN) //nolint:errcheck // closing releases it too

	host, _ := os.Hostname()
	info := LockInfo{Host: host, PID: os.Getpid(), Started: time.Now().UTC(), Command: command,
		BootID: bootID(), ProcStart: procStart(os.Getpid())}
	l := &Lock{path: path, info: info}
	err = createLock(path, info)
	if err == nil {
		return l, nil
	}
	if !errors.Is(err, fs.ErrExist) {
		return nil, err
	}
	holder, readErr := readLock(path)
	stale, why := provablyStale(holder, readErr, info)
	if readErr != nil {
		// An empty or garbled lock file (a writer killed mid-write, a hand edit) names no holder
		// to check. The journal's flock does: a live run holds it for as long as it runs.
		if stale, why = unreadableLockStale(workDir, readErr); !stale {
			return nil, &LockedError{Path: path, Reason: why} // a live run: not stale
		}
	}
	if !stale {
		return nil, &LockedError{Path: path, Holder: holder, Stale: why != "", Reason: why}
	}
	if err := os.Remove(path); err != nil {
		return nil, fmt.Errorf("lock: remove stale lock %s: %w", path, err)
	}
	if err := createLock(path, info); err != nil {
		return nil, err
	}
	l.TookOver = fmt.Sprintf("took over a stale lock from %s: %s", holder.String(), strings.TrimSpace(why))
	if readErr != nil {
		l.TookOver = "took over a lock file that could not be read: " + why
	}
	return l, nil
}

// createLock writes the lock file with O_EXCL and fsyncs it and its directory.
func createLock(path string, info LockInfo) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return err
		}
		return fmt.Errorf("lock: %w", err)
	}
	data, _ := json.Marshal(info)
	_, werr := f.Write(append(data, '\n'))
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		os.Remove(path)
		return fmt.Errorf("lock: write %s: %w", path, err)
	}
	return syncDir(filepath.Dir(path))
}

func readLock(path string) (LockInfo, error) {
	var info LockInfo
	data, err := fsroot.ReadBeneath(path, fsroot.LockInfo)
	if err != nil {
		return info, err
	}
	if err := json.Unmarshal(data, &info); err != nil {
		return info, fmt.Errorf("unreadable lock file: %w", err)
	}
	return info, nil
}

// unreadableLockStale decides about a lock file that cannot be read: stale when no process has
// the journal open for writing (the runner holds an flock on it for its whole run).
func unreadableLockStale(workDir string, readErr error) (bool, string) {
	if errors.Is(readErr, fs.ErrNotExist) {
		return true, "the lock file went away while being read"
	}
	f, err := os.OpenFile(JournalPath(workDir), os.O_RDONLY|syscall.O_NONBLOCK, 0) // a FIFO must not block
	if errors.Is(err, fs.ErrNotExist) {
		return true, fmt.Sprintf("the lock file is unreadable (%v) and there is no journal to hold", readErr)
	}
	if err != nil {
		return false, fmt.Sprintf("the lock file is unreadable (%v) and the journal cannot be checked: %v", readErr, err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return false, fmt.Sprintf("the lock file is unreadable (%v) and a process has the journal open for writing", readErr)
	}
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return true, fmt.Sprintf("the lock file was unreadable (%v) and no process has the journal open for writing", readErr)
}

// provablyStale decides whether a holder is certainly gone. why explains the verdict either way
// (empty when the holder is alive).
func provablyStale(holder LockInfo, readErr error, me LockInfo) (stale bool, why string) {
	if readErr != nil {
		// Lock files are written whole under the guard, so a partial one means its writer died
		// mid-write; still, an unreadable file proves nothing about who made it.
		return false, readErr.Error()
	}
	if holder.Host != me.Host {
		return false, fmt.Sprintf("held from host %q, this is %q; liveness there cannot be checked from here",
			holder.Host, me.Host)
	}
	if holder.BootID != "" && me.BootID != "" && holder.BootID != me.BootID {
		return true, "this host has rebooted since the lock was taken"
	}
	if holder.PID <= 0 {
		return false, "the lock names no pid"
	}
	if !pidAlive(holder.PID) {
		return true, fmt.Sprintf("pid %d is no longer running", holder.PID)
	}
	if holder.ProcStart != "" && holder.ProcStart != procStart(holder.PID) {
		return true, fmt.Sprintf("pid %d now belongs to another process", holder.PID)
	}
	return false, ""
}

// Release removes the lock file if it is still this run's.
func (l *Lock) Release() error {
	cur, err := readLock(l.path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("release lock: %w", err)
	}
	if cur.PID != l.info.PID || cur.Host != l.info.Host || !cur.Started.Equal(l.info.Started) {
		return fmt.Errorf("release lock %s: it now belongs to %s; left in place", l.path, cur)
	}
	if err := os.Remove(l.path); err != nil {
		return fmt.Errorf("release lock: %w", err)
	}
	return nil
}

// ReadLock reports the current holder of a work dir's lock, if any (for status).
func ReadLock(workDir string) (info LockInfo, held bool, err error) {
	info, err = readLock(filepath.Join(workDir, LockFile))
	if errors.Is(err, fs.ErrNotExist) {
		return LockInfo{}, false, nil
	}
	return info, err == nil, err
}

// LockAlive reports whether a lock's holder may still be running (false only when provably dead).
func LockAlive(info LockInfo) bool {
	host, _ := os.Hostname()
	stale, _ := provablyStale(info, nil, LockInfo{Host: host, BootID: bootID()})
	return !stale
}

// makeDir creates dir (0700: it holds the journal) and, when it was missing, fsyncs its parent so
// the new directory survives power loss.
func makeDir(dir string) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return syncDir(filepath.Dir(dir))
}
