package redact

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"html/template"
	"net/url"
	"strings"
	"testing"
)

const hostile = `p<&>"'%+/=ss`

// TestDerivedForms: each form a secret takes on its way out is replaced, also nested once (a
// peer's JSON body quoted in our JSON output).
func TestDerivedForms(t *testing.T) {
	s := New()
	s.AddBasic("admin", hostile)
	basic := base64.StdEncoding.EncodeToString([]byte("admin:" + hostile))
	j := func(v string) string { b, _ := json.Marshal(v); return string(b[1 : len(b)-1]) }
	for _, form := range []string{
		hostile, j(hostile), j(j(hostile)), url.QueryEscape(hostile), url.PathEscape(hostile),
		url.UserPassword("admin", hostile).String(), html.EscapeString(hostile), template.HTMLEscapeString(hostile),
		basic, j(basic), url.QueryEscape(basic), "Basic " + basic,
		base64.StdEncoding.EncodeToString([]byte(hostile)),
	} {
		for _, text := range []string{form, "x " + form + " y", `{"m":"` + form + `"}`} {
			got := s.String(text)
			if strings.Contains(got, form) && !strings.Contains(form, Mark) {
				t.Errorf("form %q survives in %q", form, got)
			}
			if !strings.Contains(got, Mark) {
				t.Errorf("form %q: nothing redacted in %q", form, got)
			}
		}
	}
	// json.Marshal of a whole error carrying the secret (HTML-safe escapes)
	b, _ := json.Marshal(map[string]string{"error": fmt.Sprintf("bad password %s", hostile)})
	if bytes.Contains(s.Bytes(b), []byte("u003c&")) || !bytes.Contains(s.Bytes(b), []byte(Mark)) {
		t.Errorf("json: %s", s.Bytes(b))
	}
}

// TestWholeValuesOnly: a secret inside an ordinary word is left alone; short values are never
// added.
func TestWholeValuesOnly(t *testing.T) {
	s := New("strap123", "abc")
	for in, want := range map[string]string{
		"bootstrap123 preflight":  "bootstrap123 preflight",
		"pass strap123 preflight": "pass " + Mark + " preflight",
		"pw=strap123&x":           "pw=" + Mark + "&x",
		"abc abc":                 "abc abc",
		"strap123strap123":        "strap123strap123",
		`"strap123"`:              `"` + Mark + `"`,
	} {
		if got := s.String(in); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
	var nilS *Scrubber
	if nilS.String("x") != "x" {
		t.Error("nil scrubber changed text")
	}
}

func TestWriter(t *testing.T) {
	var b bytes.Buffer
	w := New("topsecret1").Writer(&b)
	if n, err := fmt.Fprint(w, "a topsecret1 b"); err != nil || n != len("a topsecret1 b") {
		t.Fatal(n, err)
	}
	if b.String() != "a "+Mark+" b" {
		t.Errorf("%q", b.String())
	}
}
