package pipeline

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/bootstrap-dev/bootstrap/internal/fsroot"
)

// The hash chain detects an edit anywhere but at the end: removing the last lines, replacing the
// last line with another valid entry, or appending a forged entry with the right prev all leave a
// valid chain. The head file witnesses the end: journal.head holds the entry count and the hash of
// the newest line. Each append is two-phase:
//
//  1. the witness records the new entry as pending (its seq, its hash and the hash before it), fsync'd;
//  2. the line is appended, fsync'd;
//  3. the witness records it as committed (not fsync'd: losing this write to power loss leaves
//     the pending record, which accepts the journal either way).
//
// A kill -9 or power loss between 1 and 2 leaves a pending witness and a journal one line short,
// or with that line torn: an entry never acknowledged, accepted like a torn line. Every other
// mismatch is tampering, and the readers say which: truncated (rolled back), edited, extended.

// HeadFile is the tail witness beside the journal.
const HeadFile = "journal.head"

// headSize is the fixed size of the head record: it is rewritten in place with one write, which
// stays inside one disk sector.
const headSize = 256

// head is journal.head.
type head struct {
	Entries int64  `json:"entries"`
	Head    string `json:"head"`           // hash of line Entries
	Prev    string `json:"prev,omitempty"` // hash of line Entries-1 ("" for the first)
	// Pending: line Entries is being appended; the journal may end at Entries-1 or Entries.
	Pending bool `json:"pending,omitempty"`
}

// HeadPath returns the witness's path for the journal at path.
func HeadPath(journal string) string { return filepath.Join(filepath.Dir(journal), HeadFile) }

// Tail verdicts.
const (
	TailTruncated = "truncated" // fewer entries than witnessed: the last ones were removed (rolled back)
	TailEdited    = "edited"    // as many entries as witnessed, but the newest is not the one written
	TailExtended  = "extended"  // more entries than witnessed: appended outside bootstrap
	// TailUnwitnessed: entries but no witness. Deleting journal.head would otherwise launder a
	// journal rolled back by hand; a journal of an older bootstrap is accepted only when asked.
	TailUnwitnessed = "unwitnessed"
)

// TailError reports a journal whose end does not match its witness. Callers branch with errors.As.
type TailError struct {
	Path    string
	Kind    string // TailTruncated, TailEdited, TailExtended
	Entries int64  // complete entries in the journal
	Witness int64  // entries the witness recorded
}

func (e *TailError) Error() string {
	var what string
	switch e.Kind {
	case TailTruncated:
		what = fmt.Sprintf("rolled back or truncated: it holds %d entries, but %d were written (its witness %s says so); "+
			"the last %d entries were removed", e.Entries, e.Witness, HeadFile, e.Witness-e.Entries)
	case TailEdited:
		what = fmt.Sprintf("its newest entry (seq %d) was edited or replaced: it is not the entry bootstrap wrote (%s)", e.Entries, HeadFile)
	case TailUnwitnessed:
		what = fmt.Sprintf("unwitnessed: it holds %d entries, but %s is missing (deleted, which would hide "+
			"a rollback, or the journal was written by a bootstrap older than the witness); its end cannot be checked",
			e.Entries, HeadFile)
	default:
		what = fmt.Sprintf("extended: it holds %d entries, but bootstrap wrote %d (its witness %s says so); "+
			"entries %d..%d were added by something else", e.Entries, e.Witness, HeadFile, e.Witness+1, e.Entries)
	}
	return fmt.Sprintf("journal %s was %s", e.Path, what)
}

// readHead reads the witness; ok is false when there is none (a journal written before the
// witness existed, or an empty work dir).
func readHead(journal string) (h head, ok bool, err error) {
	b, err := fsroot.ReadBeneath(HeadPath(journal), fsroot.Witness)
	if errors.Is(err, fs.ErrNotExist) {
		return h, false, nil
	}
	if err != nil {
		return h, false, fmt.Errorf("journal witness: %w", err)
	}
	if err := json.Unmarshal(bytes.TrimRight(b, " \n\x00"), &h); err != nil || h.Entries < 0 {
		return h, false, fmt.Errorf("journal witness %s is unreadable: %v", HeadPath(journal), err)
	}
	return h, true, nil
}

// checkTailHashes is checkTail for a journal of n complete lines whose hashes hashAt gives
// (1-based; "" for 0). It needs lines n, n-1, h.Entries and h.Entries-1.
func checkTailHashes(path string, n int64, hashAt func(int64) string, h head) (pending bool, err error) {
	if h.Pending {
		switch {
		case n == h.Entries && hashAt(n) == h.Head, n == h.Entries-1 && hashAt(n) == h.Prev:
			return true, nil
		case n < h.Entries-1:
			return false, &TailError{Path: path, Kind: TailTruncated, Entries: n, Witness: h.Entries - 1}
		case n <= h.Entries:
			return false, &TailError{Path: path, Kind: TailEdited, Entries: n, Witness: n}
		case hashAt(h.Entries) != h.Head && hashAt(h.Entries-1) != h.Prev:
			return false, &TailError{Path: path, Kind: TailEdited, Entries: h.Entries, Witness: h.Entries}
		}
		return false, &TailError{Path: path, Kind: TailExtended, Entries: n, Witness: h.Entries}
	}
	switch {
	case n == h.Entries && hashAt(n) == h.Head:
		return false, nil
	case n < h.Entries:
		return false, &TailError{Path: path, Kind: TailTruncated, Entries: n, Witness: h.Entries}
	case n == h.Entries:
		return false, &TailError{Path: path, Kind: TailEdited, Entries: n, Witness: h.Entries}
	case hashAt(h.Entries) != h.Head:
		// more entries, and the witnessed one is not there either: say both
		return false, &TailError{Path: path, Kind: TailEdited, Entries: h.Entries, Witness: h.Entries}
	}
	return false, &TailError{Path: path, Kind: TailExtended, Entries: n, Witness: h.Entries}
}

// headWriter rewrites the witness in place.
type headWriter struct{ f *os.File }

func openHead(journal string) (*headWriter, error) {
	path := HeadPath(journal)
	_, statErr := os.Lstat(path)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("journal witness: %w", err)
	}
	if errors.Is(statErr, fs.ErrNotExist) {
		if err := syncDir(filepath.Dir(path)); err != nil {
			f.Close()
			return nil, fmt.Errorf("journal witness: %w", err)
		}
	}
	return &headWriter{f: f}, nil
}

// write records h with one write of headSize bytes at offset 0, then fsyncs.
func (w *headWriter) write(h head) error { return w.put(h, true) }

func (w *headWriter) put(h head, sync bool) error {
	b, err := json.Marshal(h)
	if err != nil {
		return err
	}
	if len(b) >= headSize {
		return fmt.Errorf("journal witness record of %d bytes", len(b))
	}
	rec := append(b, []byte(strings.Repeat(" ", headSize-1-len(b))+"\n")...)
	if _, err := w.f.WriteAt(rec, 0); err != nil {
		return fmt.Errorf("journal witness: %w", err)
	}
	if !sync {
		return nil
	}
	if err := w.f.Sync(); err != nil {
		return fmt.Errorf("journal witness: %w", err)
	}
	return nil
}

func (w *headWriter) close() error { return w.f.Close() }
