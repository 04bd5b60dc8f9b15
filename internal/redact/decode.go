package redact

import (
	"bytes"
	"sort"
	"strconv"
	"unicode/utf8"
)

// A peer may write a secret in escapes no encoder of ours produces: a BMC's JSON with every
// letter as \u00XX (`\u0070assword`), a URL with every byte percent-encoded, an HTML page with
// numeric entities. Redaction therefore looks at a decoded view too: the escapes are decoded
// (twice, for one escape inside another), the secret forms are searched there, and each match is
// replaced in the original bytes over the whole span of the escapes it was decoded from.

// view is b decoded, with, for every decoded byte, where in b the escape it came from starts and
// ends.
type view struct {
	dec        []byte
	start, end []int
}

// hasEscape is a cheap test for anything decode would change.
func hasEscape(b []byte) bool {
	return bytes.IndexByte(b, '\\') >= 0 || bytes.IndexByte(b, '%') >= 0 || bytes.Contains(b, []byte("&#"))
}

// decodeOnce decodes JSON escapes (\uXXXX with surrogate pairs, \/ \" \\), percent-escapes and
// numeric HTML entities in b.
func decodeOnce(b []byte) view {
	v := view{dec: make([]byte, 0, len(b)), start: make([]int, 0, len(b)), end: make([]int, 0, len(b))}
	emit := func(p []byte, from, to int) {
		for _, c := range p {
			v.dec = append(v.dec, c)
			v.start = append(v.start, from)
			v.end = append(v.end, to)
		}
	}
	var rb [utf8.UTFMax]byte
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == '\\' && i+1 < len(b) && (b[i+1] == '/' || b[i+1] == '"' || b[i+1] == '\\'):
			emit(b[i+1:i+2], i, i+2)
			i += 2
			continue
		case c == '\\' && i+5 < len(b) && b[i+1] == 'u':
			if r, ok := hex4(b[i+2 : i+6]); ok {
				n := 6
				if r >= 0xD800 && r < 0xDC00 && i+11 < len(b) && b[i+6] == '\\' && b[i+7] == 'u' {
					if lo, ok := hex4(b[i+8 : i+12]); ok && lo >= 0xDC00 && lo < 0xE000 {
						r, n = 0x10000+(r-0xD800)<<10+(lo-0xDC00), 12
					}
				}
				emit(rb[:utf8.EncodeRune(rb[:], r)], i, i+n)
				i += n
				continue
			}
		case c == '%' && i+2 < len(b):
			if x, err := strconv.ParseUint(string(b[i+1:i+3]), 16, 8); err == nil {
				emit([]byte{byte(x)}, i, i+3)
				i += 3
				continue
			}
		case c == '&' && i+3 < len(b) && b[i+1] == '#':
			if j := bytes.IndexByte(b[i:min(len(b), i+12)], ';'); j > 2 {
				num, base := string(b[i+2:i+j]), 10
				if num[0] == 'x' || num[0] == 'X' {
					num, base = num[1:], 16
				}
				if x, err := strconv.ParseUint(num, base, 21); err == nil && utf8.ValidRune(rune(x)) {
					emit(rb[:utf8.EncodeRune(rb[:], rune(x))], i, i+j+1)
					i += j + 1
					continue
				}
			}
		}
		emit(b[i:i+1], i, i+1)
		i++
	}
	return v
}

func hex4(b []byte) (rune, bool) {
	x, err := strconv.ParseUint(string(b), 16, 32)
	return rune(x), err == nil
}

// decoded decodes b twice, mapping the second round's bytes back to b.
func decoded(b []byte) view {
	v := decodeOnce(b)
	if !hasEscape(v.dec) {
		return v
	}
	w := decodeOnce(v.dec)
	for i := range w.dec {
		w.start[i], w.end[i] = v.start[w.start[i]], v.end[w.end[i]-1]
	}
	return w
}

// span is a byte range of the original to replace.
type span struct{ from, to int }

// hiddenSpans are the spans of b that decode to a whole occurrence of a needle.
func hiddenSpans(b []byte, needles [][]byte) []span {
	if !hasEscape(b) {
		return nil
	}
	v := decoded(b)
	var out []span
	for _, n := range needles {
		for start := 0; ; {
			i := bytes.Index(v.dec[start:], n)
			if i < 0 {
				break
			}
			i += start
			end := i + len(n)
			start = i + 1
			if (alnum(n[0]) && i > 0 && alnum(v.dec[i-1])) || (alnum(n[len(n)-1]) && end < len(v.dec) && alnum(v.dec[end])) {
				continue
			}
			out = append(out, span{v.start[i], v.end[end-1]})
			start = end
		}
	}
	return out
}

// replaceSpans replaces the (possibly overlapping) spans of b with Mark.
func replaceSpans(b []byte, spans []span) []byte {
	if len(spans) == 0 {
		return b
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].from < spans[j].from })
	var out []byte
	at := 0
	for i := 0; i < len(spans); {
		s := spans[i]
		for i++; i < len(spans) && spans[i].from < s.to; i++ {
			s.to = max(s.to, spans[i].to)
		}
		out = append(out, b[at:s.from]...)
		out = append(out, Mark...)
		at = s.to
	}
	return append(out, b[at:]...)
}
