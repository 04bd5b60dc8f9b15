package peerbody

import (
	"fmt"
	"io"
)

// Limits are the caps of one kind of answer.
type Limits struct {
	Body   int64 // bytes of the whole body; 0: no cap
	String int   // bytes of one JSON string, quotes and escapes included; 0: no cap
}

// LimitError is a body that passed one of its limits. Callers branch with errors.As.
type LimitError struct {
	What  string // the answer ("Redfish GET /redfish/v1/Systems/1")
	Field string // for a long string: the last complete string before it (its key), if any
	Limit int64  // the limit passed, in bytes
	Body  bool   // true: the body passed Limits.Body; false: a string passed Limits.String
}

func (e *LimitError) Error() string {
	if e.Body {
		return fmt.Sprintf("%s: the answer is larger than %d bytes, the most bootstrap reads from a peer here; refused without reading the rest", e.What, e.Limit)
	}
	at := ""
	if e.Field != "" {
		at = fmt.Sprintf(" (after %q)", e.Field)
	}
	return fmt.Sprintf("%s: a JSON string%s is longer than %d bytes, the most bootstrap accepts for one value from a peer; refused without reading the rest", e.What, at, e.Limit)
}

// maxField bounds the remembered key named in a LimitError.
const maxField = 64

// Reader returns r bounded by l: reading past l.Body bytes, or a JSON string longer than
// l.String, returns a *LimitError (what names the answer in it). The string check is a small
// state machine over the bytes as they pass, so a 50 MB value is refused after l.String bytes
// without ever being held.
func Reader(r io.Reader, l Limits, what string) io.Reader {
	return &reader{r: r, l: l, what: what}
}

type reader struct {
	r    io.Reader
	l    Limits
	what string
	n    int64 // bytes read so far
	err  error

	in     bool   // inside a string
	esc    bool   // the previous byte was a backslash inside a string
	strLen int    // bytes of the current string so far
	cur    []byte // the current string's first maxField bytes
	last   string // the last complete string (usually the key of the value that follows)
}

func (r *reader) Read(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	if r.l.Body > 0 && int64(len(p)) > r.l.Body-r.n+1 {
		p = p[:r.l.Body-r.n+1] // read at most one byte past the cap
	}
	n, err := r.r.Read(p)
	if r.l.Body > 0 && r.n+int64(n) > r.l.Body {
		r.err = &LimitError{What: r.what, Limit: r.l.Body, Body: true}
		return 0, r.err
	}
	r.n += int64(n)
	if r.l.String > 0 {
		for i, c := range p[:n] {
			if !r.scan(c) {
				r.err = &LimitError{What: r.what, Field: r.last, Limit: int64(r.l.String)}
				return i, r.err
			}
		}
	}
	return n, err
}

// scan advances the string state by one byte; false when a string passed its cap.
func (r *reader) scan(c byte) bool {
	if !r.in {
		if c == '"' {
			r.in, r.strLen, r.cur = true, 1, r.cur[:0]
		}
		return true
	}
	r.strLen++
	if r.strLen > r.l.String {
		return false
	}
	switch {
	case r.esc:
		r.esc = false
	case c == '\\':
		r.esc = true
	case c == '"':
		r.in = false
		r.last = string(r.cur)
		return true
	}
	if len(r.cur) < maxField {
		r.cur = append(r.cur, c)
	}
	return true
}
