package redact

import (
	"bytes"
	"io"
	"unicode/utf8"
)

// Truncated ends a text Clip cut.
const Truncated = "… (truncated)"

// Clip redacts b and only then cuts it to at most n bytes (on a rune boundary, ending with
// Truncated): a secret cut in half by the limit would no longer be recognised, and its first
// characters would be shown. Every bounded text from a peer (an error body, a message) goes
// through it; a nil scrubber only cuts.
func (s *Scrubber) Clip(b []byte, n int) string {
	b = s.Bytes(b)
	if len(b) <= n {
		return string(b)
	}
	for n > 0 && !utf8.RuneStart(b[n]) {
		n--
	}
	return string(b[:n]) + Truncated
}

// ClipString is Clip for a string.
func (s *Scrubber) ClipString(v string, n int) string { return s.Clip([]byte(v), n) }

// maxEscape is how many bytes one byte of a secret may take once escaped twice (%41 written as
// \u0025\u0034\u0031 is 18), the most the decoded view undoes.
const maxEscape = 18

// safeCut returns where b may be cut so that no secret form is split: at or before limit, never
// inside a match. Bytes of b past the returned offset are kept for the next round, where a form
// that started before the end now ends.
func (s *Scrubber) safeCut(b []byte, limit int) int {
	if s == nil {
		return limit
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	cut := limit
	for _, n := range s.needles {
		for start := max(0, cut-len(n)*maxEscape); start < len(b); {
			i := bytes.Index(b[start:], n[:1])
			if i < 0 {
				break
			}
			i += start
			if i >= cut {
				break
			}
			if i+len(n) > cut && i+len(n) <= len(b) && bytes.Equal(b[i:i+len(n)], n) {
				cut = i
			}
			start = i + 1
		}
	}
	for _, sp := range hiddenSpans(b, s.needles) {
		if sp.from < cut && sp.to > cut {
			cut = sp.from
		}
	}
	return cut
}

// longest is the longest secret form's length.
func (s *Scrubber) longest() int {
	if s == nil {
		return 0
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if len(s.needles) == 0 {
		return 0
	}
	return len(s.needles[0])
}

// Stream returns a writer that redacts what is written through it into w, whatever the size of
// the writes: text is held back until a secret form cannot straddle what is written out (a
// line ends, or more than max bytes are buffered: then the cut falls before any form it would
// split). Close flushes the rest.
func (s *Scrubber) Stream(w io.Writer, max int) io.WriteCloser {
	return &stream{s: s, w: w, max: max}
}

type stream struct {
	s   *Scrubber
	w   io.Writer
	max int
	buf []byte
}

func (st *stream) Write(p []byte) (int, error) {
	st.buf = append(st.buf, p...)
	for {
		n := bytes.IndexByte(st.buf, '\n') + 1
		if n == 0 {
			hold := st.s.longest() * maxEscape
			if len(st.buf) < st.max+hold {
				return len(p), nil
			}
			if n = st.s.safeCut(st.buf, len(st.buf)-hold); n == 0 {
				return len(p), nil // a form starts the buffer: write it out once it is past the cut
			}
		}
		if _, err := st.w.Write(st.s.Bytes(st.buf[:n:n])); err != nil {
			return 0, err
		}
		st.buf = st.buf[n:]
	}
}

// Close writes what is held back.
func (st *stream) Close() error {
	if len(st.buf) == 0 {
		return nil
	}
	_, err := st.w.Write(st.s.Bytes(st.buf))
	st.buf = nil
	return err
}
