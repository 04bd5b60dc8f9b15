package redact

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"net/url"
	"strings"
	"testing"
)

// hostileForms are the ways a peer may write a secret: plain, JSON-escaped by a JSON encoder,
// every letter as \u00XX (`\u0070assword`), a surrogate pair, percent-encoded whole, numeric
// HTML entities, base64 at each alignment inside a longer base64 text, and a Basic header.
func hostileForms(secret string) map[string]string {
	uEsc := func(v string) string {
		var b strings.Builder
		for _, r := range v {
			fmt.Fprintf(&b, "\\u%04x", r)
		}
		return b.String()
	}
	pct := func(v string) string {
		var b strings.Builder
		for i := 0; i < len(v); i++ {
			fmt.Fprintf(&b, "%%%02X", v[i])
		}
		return b.String()
	}
	ent := func(v string) string {
		var b strings.Builder
		for _, r := range v {
			fmt.Fprintf(&b, "&#%d;", r)
		}
		return b.String()
	}
	f := map[string]string{
		"plain":            secret,
		"json-escaped":     jsonEscape(true)(secret),
		"json-u-escaped":   uEsc(secret),
		"json-first-u":     uEsc(secret[:1]) + secret[1:],
		"percent-whole":    pct(secret),
		"query-escaped":    url.QueryEscape(secret),
		"html-entities":    ent(secret),
		"json-of-percent":  uEsc(pct(secret)),
		"base64":           base64.StdEncoding.EncodeToString([]byte(secret)),
		"base64-url-align": base64.RawURLEncoding.EncodeToString([]byte("x" + secret + "yz")),
	}
	for k := 0; k < 3; k++ {
		f[fmt.Sprintf("base64-inside-%d", k)] = base64.StdEncoding.EncodeToString([]byte(strings.Repeat("p", k) + secret + "tail"))
	}
	return f
}

// TestClipAcrossBoundary: a secret planted so the clip limit falls in its middle, in every form,
// is redacted whole before the cut: no prefix of any form of it is left in the clipped text.
func TestClipAcrossBoundary(t *testing.T) {
	secret := "S3cr&t/pa ss:wörd"
	s := New(secret)
	const limit = 512
	for name, form := range hostileForms(secret) {
		for _, back := range []int{1, len(form) / 2, len(form) - 1} {
			pre := strings.Repeat(".", limit-back)
			body := []byte(`{"error":{"message":"` + pre + form + ` after"}}`)
			at := len(`{"error":{"message":"`)
			body = body[at:]
			got := s.Clip(body, limit)
			if leaked(got, secret, form) && !strings.HasPrefix(name, "base64") || leaked(got, base64Inside(secret)...) {
				t.Errorf("%s cut %d bytes into it: %q leaks", name, back, got[max(0, len(got)-80):])
			}
		}
		// the same through Bytes alone, whole
		if got := string(s.Bytes([]byte("x " + form + " y"))); strings.Contains(got, form) || !strings.Contains(got, Mark) {
			t.Errorf("%s not redacted: %q", name, got)
		}
	}
}

// leaked reports whether got holds a prefix (of 4 bytes or more) of one of forms at its end, or
// one whole.
func leaked(got string, forms ...string) bool {
	for _, f := range forms {
		if strings.Contains(got, f) {
			return true
		}
		t := strings.TrimSuffix(got, Truncated)
		for n := 4; n < len(f); n++ {
			if strings.HasSuffix(t, f[:n]) {
				return true
			}
		}
	}
	return false
}

// TestStreamNeverSplits: a stream written in chunks of every size, with no newline, never writes a
// secret form out in two pieces.
func TestStreamNeverSplits(t *testing.T) {
	secret := "hunter2hunter2!"
	s := New(secret)
	for name, form := range hostileForms(secret) {
		text := []byte(strings.Repeat("a", 300) + " " + form + " " + strings.Repeat("b", 700) + " " + form + " c")
		for _, chunk := range []int{1, 7, 64, 333, len(text)} {
			var out bytes.Buffer
			w := s.Stream(&out, 100)
			for i := 0; i < len(text); i += chunk {
				w.Write(text[i:min(len(text), i+chunk)])
			}
			w.Close()
			if strings.Count(out.String(), Mark) != 2 || strings.Contains(out.String(), secret) {
				t.Errorf("%s in chunks of %d: %d marks", name, chunk, strings.Count(out.String(), Mark))
			}
		}
	}
}

// TestDecodedViewLeavesTextAlone: escapes without a secret are left as written.
func TestDecodedViewLeavesTextAlone(t *testing.T) {
	s := New("correct-horse-battery")
	in := `{"path":"\/redfish\/v1","pct":"100%","u":"\u00e9t\u00e9 &#233; %41"}`
	if got := string(s.Bytes([]byte(in))); got != in {
		t.Errorf("changed: %s", got)
	}
}

// TestNilScrubber: a nil scrubber ignores additions and only cuts.
func TestNilScrubber(t *testing.T) {
	var s *Scrubber
	s.Add("a-long-secret")
	s.AddBasic("u", "a-long-secret")
	if got := s.Clip([]byte("abcdef"), 3); got != "abc"+Truncated {
		t.Errorf("%q", got)
	}
}
