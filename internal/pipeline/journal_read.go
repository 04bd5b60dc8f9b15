package pipeline

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// JournalFile and LockFile are the names of the journal and the lock inside the work dir.
const (
	JournalFile = "journal.jsonl"
	LockFile    = "lock"
)

// JournalPath returns the journal's path in a work dir.
func JournalPath(workDir string) string { return filepath.Join(workDir, JournalFile) }

// ChainError reports a journal whose history was edited, removed or damaged. Line is the 1-based
// line number; Seq the entry's seq (or the seq expected there when the line does not parse).
type ChainError struct {
	Path   string
	Line   int
	Seq    int64
	Reason string
}

// Error names the file, line and seq, and says what to do.
func (e *ChainError) Error() string {
	return fmt.Sprintf("journal %s: line %d (seq %d): %s; the history is not trustworthy: move the file "+
		"aside (keep it as evidence) to start a new journal", e.Path, e.Line, e.Seq, e.Reason)
}

// line is one complete, parsed journal line.
type line struct {
	raw   []byte // without the newline
	entry Entry
}

// scanned is a journal file split into good lines and a torn tail.
type scanned struct {
	lines   []line
	goodLen int64  // bytes up to and including the last good line's newline
	torn    []byte // a last line cut short by a crash (no newline, or unparseable at the very end)
	bad     *ChainError
}

// scan parses journal bytes. Only the very last line may be torn; an unparseable line followed
// by more lines is damage, reported in bad (the lines before it are kept).
func scan(path string, data []byte) scanned {
	var s scanned
	off := 0
	for off < len(data) {
		nl := bytes.IndexByte(data[off:], '\n')
		if nl < 0 {
			s.torn = data[off:]
			return s
		}
		raw := data[off : off+nl]
		var e Entry
		if err := json.Unmarshal(raw, &e); err != nil || e.Seq == 0 || e.Kind == "" {
			if off+nl+1 == len(data) {
				s.torn = data[off:]
				return s
			}
			reason := "not a journal entry"
			if err != nil {
				reason = "invalid JSON: " + err.Error()
			}
			s.bad = &ChainError{Path: path, Line: len(s.lines) + 1, Seq: int64(len(s.lines) + 1), Reason: reason}
			return s
		}
		s.lines = append(s.lines, line{raw: raw, entry: e})
		off += nl + 1
		s.goodLen = int64(off)
	}
	return s
}

// hashLine is the chain hash of one line's bytes (without the newline).
func hashLine(raw []byte) string {
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

// verify checks seq numbering and the hash chain of good lines.
func (s scanned) verify(path string) error {
	if s.bad != nil {
		return s.bad
	}
	prev := ""
	for i, l := range s.lines {
		want := int64(i + 1)
		if l.entry.Seq > want {
			return &ChainError{Path: path, Line: i + 1, Seq: want,
				Reason: fmt.Sprintf("entry seq %d is missing (line %d has seq %d): it was removed", want, i+1, l.entry.Seq)}
		}
		if l.entry.Seq != want {
			return &ChainError{Path: path, Line: i + 1, Seq: l.entry.Seq,
				Reason: fmt.Sprintf("seq %d where %d was expected: an entry was inserted, or its seq edited", l.entry.Seq, want)}
		}
		if l.entry.Prev != prev {
			return &ChainError{Path: path, Line: i, Seq: want - 1,
				Reason: fmt.Sprintf("entry seq %d does not match the hash recorded by seq %d: it was edited, "+
					"or an entry before it was removed", want-1, want)}
		}
		prev = hashLine(l.raw)
	}
	return nil
}

// tornWarning describes a dropped torn line.
func tornWarning(path string, torn []byte) string {
	return fmt.Sprintf("journal %s: ignored a torn last line (%d bytes) left by an interrupted write; "+
		"the step it was recording was not acknowledged and will run again", path, len(torn))
}

// ReadJournal reads every complete entry of the journal at path, read-only. A torn last line is
// left out and reported in warnings. A missing journal is empty. Damage in the middle of the file
// is returned as a *ChainError together with the entries before it; the hash chain itself is
// checked by VerifyChain.
func ReadJournal(path string) (entries []Entry, warnings []string, err error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read journal: %w", err)
	}
	s := scan(path, data)
	entries = make([]Entry, len(s.lines))
	for i, l := range s.lines {
		entries[i] = l.entry
	}
	if len(s.torn) > 0 {
		warnings = append(warnings, tornWarning(path, s.torn))
	}
	if s.bad != nil {
		return entries, warnings, s.bad
	}
	return entries, warnings, nil
}

// VerifyChain checks that the journal at path is a gapless hash chain: every entry's prev is the
// SHA-256 of the line before it and seqs count from 1. It returns a *ChainError naming the first
// entry that was edited or removed. A torn last line is not an error. The newest entry is only
// protected once another follows it; Status.Head gives its hash for recording elsewhere.
func VerifyChain(path string) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("verify journal: %w", err)
	}
	return scan(path, data).verify(path)
}

func asChain(err error, target **ChainError) bool { return errors.As(err, target) }

// journalHead returns the hash of the journal's newest complete line ("" when empty).
func journalHead(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	s := scan(path, data)
	if len(s.lines) == 0 {
		return "", nil
	}
	return hashLine(s.lines[len(s.lines)-1].raw), nil
}

// VerifyTail checks the journal's end against its witness (HeadFile), read-only: a *TailError
// when it was truncated, edited at its end or extended. witnessed is false when there is no
// witness (a journal written by an older bootstrap). A witness one entry ahead is a crash
// between writing the witness and the line, not an error.
func VerifyTail(path string) (witnessed bool, err error) {
	h, ok, err := readHead(path)
	if err != nil || !ok {
		return false, err
	}
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return true, fmt.Errorf("verify journal: %w", err)
	}
	_, err = checkTail(path, scan(path, data).lines, h)
	return true, err
}
