package pipeline

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"

	"github.com/bootstrap-dev/bootstrap/internal/fsroot"
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

// hashLine is the chain hash of one line's bytes (without the newline).
func hashLine(raw []byte) string {
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

// parseLine decodes one journal line; reason says why it is not an entry ("" when it is).
func parseLine(raw []byte) (Entry, string) {
	var e Entry
	err := json.Unmarshal(raw, &e)
	switch {
	case err != nil:
		return e, "invalid JSON: " + err.Error()
	case e.Seq == 0 || e.Kind == "":
		return e, "not a journal entry"
	}
	return e, ""
}

// chainLink checks that e, the n-th good line (1-based), has seq n and records prev, the hash of
// the line before it.
func chainLink(path string, n int64, e Entry, prev string) *ChainError {
	if e.Seq > n {
		return &ChainError{Path: path, Line: int(n), Seq: n,
			Reason: fmt.Sprintf("entry seq %d is missing (line %d has seq %d): it was removed", n, n, e.Seq)}
	}
	if e.Seq != n {
		return &ChainError{Path: path, Line: int(n), Seq: e.Seq,
			Reason: fmt.Sprintf("seq %d where %d was expected: an entry was inserted, or its seq edited", e.Seq, n)}
	}
	if e.Prev != prev {
		return &ChainError{Path: path, Line: int(n - 1), Seq: n - 1,
			Reason: fmt.Sprintf("entry seq %d does not match the hash recorded by seq %d: it was edited, "+
				"or an entry before it was removed", n-1, n)}
	}
	return nil
}

// tornWarning describes a dropped torn line.
func tornWarning(path string, torn int) string {
	return fmt.Sprintf("journal %s: ignored a torn last line (%d bytes) left by an interrupted write; "+
		"the step it was recording was not acknowledged and will run again", path, torn)
}

// pass is one streaming read of a journal: the same split as scan (only the very last line may be
// torn; an unparseable line before more lines is damage), with the hash chain checked as it goes
// and no raw line kept.
type pass struct {
	entries []Entry     // the good lines' entries, when asked for
	n       int64       // good lines
	torn    int         // bytes of a torn last line
	bad     *ChainError // an unparseable line followed by more (reading stopped there)
	broken  *ChainError // the first seq or hash-chain break among the good lines
	hashes  map[int64]string
}

// chainErr is what VerifyChain reports: damage first, then the first break.
func (p *pass) chainErr() error {
	if p.bad != nil {
		return p.bad
	}
	if p.broken != nil {
		return p.broken
	}
	return nil
}

// hashAt is the hash of good line i (1-based), "" for 0 or lines not asked for.
func (p *pass) hashAt(i int64) string { return p.hashes[i] }

// maxLine bounds one journal line: entries are a few KiB, a stage's output at most a few MiB; a
// longer line is refused before it exhausts memory.
const maxLine = 64 << 20

// readPass reads the journal at path once. keep collects the entries; the hashes of the last two
// good lines and of the lines in want are kept. A missing journal is empty.
func readPass(path string, keep bool, want ...int64) (*pass, error) {
	p := &pass{hashes: map[int64]string{}}
	f, err := fsroot.OpenBeneath(path, fsroot.Stream)
	if errors.Is(err, fs.ErrNotExist) {
		return p, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	wanted := map[int64]bool{}
	for _, w := range want {
		wanted[w] = true
	}
	br := bufio.NewReaderSize(f, 256<<10)
	var long []byte
	prev := ""
	for {
		raw, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) { // a line longer than the buffer
			long = append(long[:0], raw...)
			for errors.Is(err, bufio.ErrBufferFull) {
				raw, err = br.ReadSlice('\n')
				long = append(long, raw...)
				if len(long) > maxLine {
					return nil, fmt.Errorf("journal %s: line %d is longer than %d MiB, more than any entry bootstrap writes: "+
						"the file is not a journal bootstrap wrote; move it aside (keep it as evidence)", path, p.n+1, maxLine>>20)
				}
			}
			raw = long
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		if err != nil { // no newline: the end, torn when not empty
			p.torn = len(raw)
			break
		}
		e, reason := parseLine(raw[:len(raw)-1])
		if reason != "" {
			if _, perr := br.Peek(1); errors.Is(perr, io.EOF) {
				p.torn = len(raw)
				break
			}
			p.bad = &ChainError{Path: path, Line: int(p.n + 1), Seq: p.n + 1, Reason: reason}
			break
		}
		p.n++
		if p.broken == nil {
			p.broken = chainLink(path, p.n, e, prev)
		}
		if p.n > 2 && !wanted[p.n-2] {
			delete(p.hashes, p.n-2)
		}
		prev = hashLine(raw[:len(raw)-1])
		p.hashes[p.n] = prev
		if keep {
			p.entries = append(p.entries, e)
		}
	}
	return p, nil
}

// ReadJournal reads every complete entry of the journal at path, read-only. A torn last line is
// left out and reported in warnings. A missing journal is empty. Damage in the middle of the file
// is returned as a *ChainError together with the entries before it; the hash chain itself is
// checked by VerifyChain.
func ReadJournal(path string) (entries []Entry, warnings []string, err error) {
	p, err := readPass(path, true)
	if err != nil {
		return nil, nil, fmt.Errorf("read journal: %w", err)
	}
	if p.torn > 0 {
		warnings = append(warnings, tornWarning(path, p.torn))
	}
	if p.bad != nil {
		return p.entries, warnings, p.bad
	}
	return p.entries, warnings, nil
}

// VerifyChain checks that the journal at path is a gapless hash chain: every entry's prev is the
// SHA-256 of the line before it and seqs count from 1. It returns a *ChainError naming the first
// entry that was edited or removed. A torn last line is not an error. The newest entry is only
// protected once another follows it; Status.Head gives its hash for recording elsewhere.
func VerifyChain(path string) error {
	p, err := readPass(path, false)
	if err != nil {
		return fmt.Errorf("verify journal: %w", err)
	}
	return p.chainErr()
}

// VerifyTail checks the journal's end against its witness (HeadFile), read-only: a *TailError
// when it was truncated, edited at its end or extended. witnessed is false when there is no
// witness and no entry; a journal with entries but no witness is a TailError (TailUnwitnessed).
// A witness one entry ahead is a crash between writing the witness and the line, not an error.
func VerifyTail(path string) (witnessed bool, err error) {
	h, ok, err := readHead(path)
	if err != nil {
		return false, err
	}
	p, err := readPass(path, false, h.Entries, h.Entries-1)
	if err == nil && !ok {
		if p.n > 0 {
			return false, &TailError{Path: path, Kind: TailUnwitnessed, Entries: p.n}
		}
		return false, nil
	}
	if err != nil {
		return true, fmt.Errorf("verify journal: %w", err)
	}
	_, err = checkTailHashes(path, p.n, p.hashAt, h)
	return true, err
}
