package redact

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"html"
	"io"
	"net/url"
	"sort"
	"strings"
	"sync"
)

// MinLen is the shortest secret the site accepts (validation refuses shorter ones) and the
// shortest form the scrubber replaces.
const MinLen = 8

// Mark replaces every secret.
const Mark = "[redacted]"

// Scrubber replaces secrets in bytes. The zero value scrubs nothing until secrets are added; a
// nil *Scrubber scrubs nothing and ignores additions. It is safe for concurrent use; secrets may
// be added at any time.
type Scrubber struct {
	mu      sync.RWMutex
	needles [][]byte // longest first
	seen    map[string]bool
	inside  map[string]bool // forms found inside longer base64 text: replaced even glued to letters
}

// New returns a scrubber for values.
func New(values ...string) *Scrubber {
	s := &Scrubber{}
	for _, v := range values {
		s.Add(v)
	}
	return s
}

// Add adds a secret value (surrounding space trimmed, as secret files end with a newline) and
// its derived forms. Values shorter than MinLen are skipped: they would mangle ordinary text,
// and validation refuses them.
func (s *Scrubber) Add(value string) {
	value = strings.TrimSpace(value)
	if len(value) < MinLen {
		return
	}
	if s == nil {
		return
	}
	s.add(Forms(value)...)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inside == nil {
		s.inside = map[string]bool{}
	}
	for _, f := range base64Inside(value) {
		s.inside[f] = true
	}
}

// AddBasic adds the credentials of HTTP basic authentication: the password (Add) and the
// base64 of user:password that an Authorization header carries.
func (s *Scrubber) AddBasic(user, password string) {
	s.Add(password)
	password = strings.TrimSpace(password)
	if len(password) < MinLen {
		return
	}
	b := base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
	s.add(Forms(b)...)
}

func (s *Scrubber) add(forms ...string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen == nil {
		s.seen = map[string]bool{}
	}
	for _, f := range forms {
		if len(f) < MinLen || s.seen[f] {
			continue
		}
		s.seen[f] = true
		s.needles = append(s.needles, []byte(f))
	}
	// Longest first, so a form containing another is replaced whole.
	sort.SliceStable(s.needles, func(i, j int) bool { return len(s.needles[i]) > len(s.needles[j]) })
}

// encodings a value goes through on its way out: as it is, JSON-escaped (with and without the
// HTML-safe escapes encoding/json applies by default), URL-encoded (query and path), HTML-escaped
// (html.EscapeString and the numeric entities of html/template and encoding/xml), and base64.
var encodings = []func(string) string{
	func(v string) string { return v },
	jsonEscape(true),
	jsonEscape(false),
	url.QueryEscape,
	url.PathEscape,
	userinfoEscape,
	html.EscapeString,
	htmlNumeric,
}

// Forms returns value and what it becomes through one or two of the encodings, and its base64.
func Forms(value string) []string {
	seen := map[string]bool{}
	var out []string
	addAll := func(v string) {
		for _, e1 := range encodings {
			f1 := e1(v)
			for _, e2 := range encodings {
				f := e2(f1)
				if !seen[f] {
					seen[f] = true
					out = append(out, f)
				}
			}
		}
	}
	addAll(value)
	b := base64.StdEncoding.EncodeToString([]byte(value))
	addAll(b)
	addAll(strings.TrimRight(b, "="))
	for _, f := range base64Inside(value) {
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	return out
}

// base64Inside is what value becomes inside a longer base64 text (a Basic header, a pull
// secret's auth, a BMC's base64 blob): for each of the three alignments, in the standard and the
// URL alphabet, the characters that encode value's bits alone.
func base64Inside(value string) []string {
	var out []string
	for k := 0; k < 3; k++ {
		for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
			e := enc.EncodeToString(append(make([]byte, k), value...))
			first := (8*k + 5) / 6           // the first character whose bits are all value's
			last := 8 * (k + len(value)) / 6 // characters before this one end within value
			if last-first >= MinLen {
				out = append(out, e[first:last])
			}
		}
	}
	return out
}

func jsonEscape(htmlSafe bool) func(string) string {
	return func(v string) string {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(htmlSafe)
		_ = enc.Encode(v)
		out := strings.TrimSuffix(b.String(), "\n")
		return out[1 : len(out)-1]
	}
}

// userinfoEscape is how net/url writes a password in user:password@host.
func userinfoEscape(v string) string {
	s := url.UserPassword("u", v).String()
	return s[len("u:"):]
}

// htmlNumeric escapes as html/template and encoding/xml do (&#34; &#39;).
func htmlNumeric(v string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;").Replace(v)
}

// Bytes returns b with every whole occurrence of a secret form replaced by Mark; b itself is not
// modified.
func (s *Scrubber) Bytes(b []byte) []byte {
	if s == nil {
		return b
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, n := range s.needles {
		switch {
		case !bytes.Contains(b, n):
		case s.inside[string(n)]:
			b = bytes.ReplaceAll(b, n, []byte(Mark))
		default:
			b = replaceWhole(b, n)
		}
	}
	return replaceSpans(b, hiddenSpans(b, s.needles))
}

// String is Bytes for a string.
func (s *Scrubber) String(v string) string {
	if s == nil {
		return v
	}
	return string(s.Bytes([]byte(v)))
}

// replaceWhole replaces the occurrences of n in b that are not glued to a letter or digit: an
// occurrence whose first (last) byte is alphanumeric must not follow (precede) one.
func replaceWhole(b, n []byte) []byte {
	var out []byte
	rest, start := b, 0
	for {
		i := bytes.Index(rest[start:], n)
		if i < 0 {
			break
		}
		i += start
		end := i + len(n)
		glued := (alnum(n[0]) && i > 0 && alnum(rest[i-1])) || (alnum(n[len(n)-1]) && end < len(rest) && alnum(rest[end]))
		if glued {
			start = i + 1
			continue
		}
		out = append(out, rest[:i]...)
		out = append(out, Mark...)
		rest, start = rest[end:], 0
	}
	if out == nil {
		return b
	}
	return append(out, rest...)
}

func alnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// Writer wraps w so every write is scrubbed (writes should be whole records or lines).
func (s *Scrubber) Writer(w io.Writer) io.Writer {
	if s == nil {
		return w
	}
	return writer{s, w}
}

type writer struct {
	s *Scrubber
	w io.Writer
}

// Unwrap returns the writer underneath (a terminal check looks through the scrubber).
func (w writer) Unwrap() io.Writer { return w.w }

func (w writer) Write(p []byte) (int, error) {
	if _, err := w.w.Write(w.s.Bytes(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}
