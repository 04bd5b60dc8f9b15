package pipeline

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// MaxEntryBytes bounds one journal line. Stages that need more write a file in the work dir and
// journal its path and hash.
const MaxEntryBytes = 256 << 10

// Journal is the open, append-only journal of one work dir. Only the runner holds one, under the
// run lock. It is safe for concurrent use.
type Journal struct {
	path string

	mu      sync.Mutex
	f       *os.File
	entries []Entry
	prev    string // hash of the last line
	hw      *headWriter
	now     func() time.Time
}

// JournalOptions tune OpenJournalWith.
type JournalOptions struct {
	// AcceptTail opens a journal whose end does not match its witness (a *TailError: truncated,
	// edited or extended) instead of refusing it: the witness is reset to the journal as it is
	// and the TailError's text is returned among the warnings, for the caller to journal.
	AcceptTail bool
}

// OpenJournal opens (creating if needed) the journal at path for appending. It reads every entry;
// a torn last line is truncated away (and fsynced) before anything is appended, and reported in
// warnings. Damage in the middle of the file or a broken hash chain is a *ChainError: nothing
// may be appended to an untrustworthy history.
//
// The journal's end is checked against its witness (HeadFile): a journal truncated, edited at its
// end or extended behind bootstrap's back is a *TailError, and so is a journal with entries but no
// witness (TailUnwitnessed). A refused open changes nothing on disk (a torn tail is dropped only
// once the end is accepted).
func OpenJournal(path string) (j *Journal, warnings []string, err error) {
	return OpenJournalWith(path, JournalOptions{})
}

// OpenJournalWith is OpenJournal with options.
func OpenJournalWith(path string, o JournalOptions) (j *Journal, warnings []string, err error) {
	dir := filepath.Dir(path)
	if err := makeDir(dir); err != nil {
		return nil, nil, fmt.Errorf("open journal: %w", err)
	}
	_, statErr := os.Stat(path)
	created := errors.Is(statErr, fs.ErrNotExist)
	// O_APPEND: every write lands at the end even if something else ever wrote the file.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("open journal: %w", err)
	}
	// A second safety net behind the lock file (which a person may delete by mistake): only one
	// process appends at a time. The kernel drops the flock when the process dies.
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		info, _, _ := ReadLock(dir)
		return nil, nil, &LockedError{Path: path, Holder: info,
			Reason: fmt.Sprintf("another process has the journal open for writing (%v)", err)}
	}
	if created {
		if err := syncDir(dir); err != nil {
			f.Close()
			return nil, nil, fmt.Errorf("open journal: %w", err)
		}
	}
	// One streaming pass, as status and report read: entries decoded, the chain checked, no raw
	// line kept; only the hashes the witness check needs (the last two lines and the two it
	// names) are. The flock held above keeps the file still while it is read.
	h, hasHead, herr := readHead(path)
	p, err := readPass(path, true, h.Entries, h.Entries-1)
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("open journal %s: %w", path, err)
	}
	if err := p.chainErr(); err != nil {
		f.Close()
		return nil, nil, err
	}
	// The end is checked before anything is changed: a refused open leaves the work dir as it
	// was, a torn tail included (it is evidence too).
	tailWarnings, hw, err := witness(path, p.n, p.hashAt, h, hasHead, herr, o.AcceptTail)
	if err != nil {
		f.Close()
		if created {
			os.Remove(path)
		}
		return nil, nil, err
	}
	if p.torn > 0 {
		warnings = append(warnings, tornWarning(path, p.torn))
		fi, err := f.Stat()
		if err == nil {
			err = f.Truncate(fi.Size() - int64(p.torn))
		}
		if err == nil {
			err = f.Sync()
		}
		if err != nil {
			f.Close()
			hw.close()
			return nil, nil, fmt.Errorf("open journal %s: drop torn line: %w", path, err)
		}
	}
	warnings = append(warnings, tailWarnings...)
	j = &Journal{path: path, f: f, hw: hw, now: time.Now, entries: p.entries, prev: p.hashAt(p.n)}
	return j, warnings, nil
}

// syncDir fsyncs a directory so a newly created file in it survives power loss.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

// Path returns the journal file's path.
func (j *Journal) Path() string { return j.path }

// fold folds the entries without copying them.
func (j *Journal) fold() Status {
	j.mu.Lock()
	defer j.mu.Unlock()
	return Fold(j.entries)
}

// each calls fn for every entry, oldest first, under the journal's lock (fn must not append).
func (j *Journal) each(fn func(*Entry)) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for i := range j.entries {
		fn(&j.entries[i])
	}
}

// Entries returns a copy of every entry, oldest first.
func (j *Journal) Entries() []Entry {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]Entry(nil), j.entries...)
}

// Append fills in Seq, Time (when zero) and Prev, writes e as one line and fsyncs before
// returning the entry as written. The caller vouches that e holds no secret.
func (j *Journal) Append(e Entry) (Entry, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return Entry{}, fmt.Errorf("journal %s: append after close", j.path)
	}
	e.Seq = int64(len(j.entries)) + 1
	if e.Time.IsZero() {
		e.Time = j.now().UTC()
	}
	e.Prev = j.prev
	raw, err := marshalEntry(e)
	if err == nil && len(raw) <= MaxEntryBytes {
		// the witness first, as pending (see journal_head.go)
		if werr := j.hw.write(head{Entries: e.Seq, Head: hashLine(raw), Prev: j.prev, Pending: true}); werr != nil {
			return Entry{}, j.fail(werr)
		}
	}
	if err != nil {
		return Entry{}, fmt.Errorf("journal %s: %s %s %s: %w", j.path, e.Kind, e.Stage, e.Step, err)
	}
	if len(raw) > MaxEntryBytes {
		return Entry{}, fmt.Errorf("journal %s: %s %s %s: entry of %d bytes exceeds %d: write large data "+
			"to a file in the work dir and journal its path and hash", j.path, e.Kind, e.Stage, e.Step, len(raw), MaxEntryBytes)
	}
	// One write of line+newline: a crash leaves at most a torn last line, never a torn middle.
	if _, err := j.f.Write(append(raw, '\n')); err != nil {
		return Entry{}, j.fail(err)
	}
	if err := j.f.Sync(); err != nil {
		return Entry{}, j.fail(err)
	}
	if err := j.hw.put(head{Entries: e.Seq, Head: hashLine(raw), Prev: j.prev}, false); err != nil {
		return Entry{}, j.fail(err)
	}
	j.entries = append(j.entries, e)
	j.prev = hashLine(raw)
	return e, nil
}

// fail closes the journal after a failed write: what is on disk may end in a torn line, which
// the next OpenJournal drops. Appending more here could put a good line after a torn one.
func (j *Journal) fail(err error) error {
	j.f.Close()
	j.f = nil
	_ = j.hw.close()
	return fmt.Errorf("journal %s: write: %w (the journal is closed; the next run repairs it)", j.path, err)
}

// marshalEntry encodes e compactly without HTML escaping (the bytes are what the chain hashes).
func marshalEntry(e Entry) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(e); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// Close closes the file. Entries already appended are on disk.
func (j *Journal) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return nil
	}
	err := j.f.Close()
	j.f = nil
	if herr := j.hw.close(); err == nil {
		err = herr
	}
	return err
}

// witness checks the journal's n complete lines (hashAt gives their hashes, 1-based) against its
// witness h (ok: there is one; herr: it could not be read) and leaves the witness matching them,
// open for appends. A mismatch is a *TailError unless accept is set.
func witness(path string, n int64, hashAt func(int64) string, h head, ok bool, herr error, accept bool) (warnings []string, hw *headWriter, err error) {
	reset := true
	switch {
	case herr != nil && !accept:
		return nil, nil, fmt.Errorf("%w; the journal's end cannot be checked: move the work dir aside (keep it as evidence), "+
			"or continue from the journal as it is (bootstrap run --accept-journal-tail)", herr)
	case herr != nil:
		warnings = append(warnings, "continued without checking the journal's end: "+herr.Error())
	case !ok && n > 0 && !accept:
		return nil, nil, &TailError{Path: path, Kind: TailUnwitnessed, Entries: n}
	case !ok && n > 0:
		warnings = append(warnings, "continued from a journal whose end does not match its witness, as asked: "+
			(&TailError{Path: path, Kind: TailUnwitnessed, Entries: n}).Error()+"; its end is witnessed from now on")
	case ok:
		pending, terr := checkTailHashes(path, n, hashAt, h)
		if terr != nil && !accept {
			return nil, nil, terr
		}
		if terr != nil {
			warnings = append(warnings, "continued from a journal whose end does not match its witness, as asked: "+terr.Error())
		}
		reset = pending || terr != nil
	}
	hw, err = openHead(path)
	if err != nil {
		return nil, nil, err
	}
	if reset {
		if err := hw.write(head{Entries: n, Head: hashAt(n), Prev: hashAt(n - 1)}); err != nil {
			hw.close()
			return nil, nil, err
		}
	}
	return warnings, hw, nil
}
