package pipeline

import "bytes"

// The reference model of a journal read, for the differential fuzz test (FuzzJournalPass) and the
// test helpers: the whole file in memory, split into lines kept raw. OpenJournal, ReadJournal,
// VerifyChain and VerifyTail all read with readPass, which keeps no raw line; the fuzz test checks
// it agrees with this model on every input.

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
		e, reason := parseLine(raw)
		if reason != "" {
			if off+nl+1 == len(data) {
				s.torn = data[off:]
				return s
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

// verify checks seq numbering and the hash chain of good lines.
func (s scanned) verify(path string) error {
	if s.bad != nil {
		return s.bad
	}
	prev := ""
	for i, l := range s.lines {
		if err := chainLink(path, int64(i+1), l.entry, prev); err != nil {
			return err
		}
		prev = hashLine(l.raw)
	}
	return nil
}

// checkTail compares the journal's complete lines with the witness. pending is true when an
// append was interrupted (the witness then needs rewriting): not tampering.
func checkTail(path string, lines []line, h head) (pending bool, err error) {
	n := int64(len(lines))
	return checkTailHashes(path, n, func(i int64) string { // hash of line i (1-based), "" for 0
		if i <= 0 || i > n {
			return ""
		}
		return hashLine(lines[i-1].raw)
	}, h)
}

// headOf is the witness of a journal whose complete lines are lines.
func headOf(lines []line) head {
	var h head
	h.Entries = int64(len(lines))
	if n := len(lines); n > 0 {
		h.Head = hashLine(lines[n-1].raw)
		if n > 1 {
			h.Prev = hashLine(lines[n-2].raw)
		}
	}
	return h
}
