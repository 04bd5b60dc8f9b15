package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"html"
	"html/template"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/redact"
)

// echoCanary is the secret in every secret file: it holds each character that some encoding
// changes (JSON, URL, HTML, base64 padding).
const echoCanary = `Ech0<&>"'%+/=pw-7f3a`

// TestEchoingPeersLeakNothing: BMCs, the registry and the Git server are one peer that answers
// every request with an error quoting the Authorization header, the decoded credentials and the
// request body (JSON, so with \u003c escapes). Not one derived form of a secret appears in any
// byte the commands write: stdout, stderr, the journal, preflight.json, the log, reports in
// every format and the gather tarball.
func TestEchoingPeersLeakNothing(t *testing.T) {
	var authed atomic.Int64
	echo := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, ok := r.BasicAuth()
		if !ok && strings.Contains(r.URL.Path, ".git") {
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if ok {
			authed.Add(1)
		}
		body, _ := io.ReadAll(r.Body)
		msg := "you sent " + r.Header.Get("Authorization") + " as " + user + " with " + pass + " and " + string(body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		_ = json.NewEncoder(w).Encode(map[string]any{
			"error":  map[string]any{"code": "Base.1.8.GeneralError", "message": msg, "@Message.ExtendedInfo": []any{map[string]string{"MessageId": "Base.1.8.GeneralError", "Message": msg}}},
			"errors": []any{map[string]string{"code": "UNKNOWN", "message": msg}},
		})
	})
	srv := httptest.NewTLSServer(echo) // the registry and the Git server
	defer srv.Close()
	host := srv.Listener.Addr().String()

	dir := t.TempDir()
	file := writeLabSite(t, dir, echoCanary)
	b, _ := os.ReadFile(file)
	y := string(b)
	for _, port := range []string{"9101", "9102", "9103", "9104"} { // one BMC each (same test certificate)
		bmc := httptest.NewTLSServer(echo)
		defer bmc.Close()
		y = strings.ReplaceAll(y, "https://127.0.0.1:"+port, bmc.URL)
	}
	y = strings.ReplaceAll(y, "127.0.0.1:5443", host)
	y = strings.ReplaceAll(y, "127.0.0.1:3443", host)
	write(t, file, []byte(y), 0o644)
	write(t, filepath.Join(dir, "certs/lab-ca.pem"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644)
	auth := base64.StdEncoding.EncodeToString([]byte("lab:" + echoCanary))
	write(t, filepath.Join(dir, "secrets/registry-auth.json"), []byte(`{"auths":{"`+host+`":{"auth":"`+auth+`"}}}`), 0o600)

	report := filepath.Join(dir, "report.html")
	var seen []string
	for _, args := range [][]string{
		{"validate", "-f", file},
		{"preflight", "-f", file, "--min-free-gib", "0", "--timeout", "20s"},
		{"preflight", "-f", file, "--min-free-gib", "0", "--timeout", "20s", "-o", "json"},
		{"run", "-f", file, "--until", "preflight"},
		{"run", "-f", file, "-o", "json", "--until", "preflight"},
		{"status", "-f", file},
		{"status", "-f", file, "-o", "json"},
		{"report", "-f", file},
		{"report", "-f", file, "--format", "json"},
		{"report", "-f", file, "--format", "html", "--out", report},
		{"gather", "-f", file, "--ssh-port", "1", "--out", filepath.Join(dir, ".bootstrap", "g.tar.gz")},
	} {
		_, out, errs := run(t, args...)
		seen = append(seen, out, errs)
	}
	if authed.Load() == 0 {
		t.Fatal("no peer was sent credentials: the test proves nothing")
	}
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasPrefix(p, filepath.Join(dir, "secrets")) {
			return err
		}
		b, _ := os.ReadFile(p)
		seen = append(seen, string(b))
		if strings.HasSuffix(p, ".tar.gz") {
			seen = append(seen, tarText(t, p)...)
		}
		return nil
	})
	all := strings.Join(seen, "\n")
	if !strings.Contains(all, redact.Mark) {
		t.Fatalf("nothing redacted: the echo did not reach any output\n%s", all)
	}
	for _, form := range derivedForms(echoCanary, "root", "lab") {
		for _, s := range seen {
			if i := strings.Index(s, form); i >= 0 {
				t.Errorf("secret form %q leaked: ...%s...", form, s[max(0, i-200):min(len(s), i+len(form)+50)])
				break
			}
		}
	}
}

// derivedForms are the forms the issue names: the value, base64 of user:value, JSON-escaped
// (once and twice), URL-encoded, HTML-escaped.
func derivedForms(secret string, users ...string) []string {
	j := func(v string) string { b, _ := json.Marshal(v); return string(b[1 : len(b)-1]) }
	forms := []string{secret, j(secret), j(j(secret)), url.QueryEscape(secret), url.PathEscape(secret),
		html.EscapeString(secret), template.HTMLEscapeString(secret), base64.StdEncoding.EncodeToString([]byte(secret))}
	for _, u := range users {
		b := base64.StdEncoding.EncodeToString([]byte(u + ":" + secret))
		forms = append(forms, b, j(b), url.UserPassword(u, secret).String())
	}
	return forms
}

// tarText is the content of every file in a gzip tarball.
func tarText(t *testing.T, path string) []string {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	var out []string
	for {
		if _, err := tr.Next(); err != nil {
			break
		}
		b, _ := io.ReadAll(tr)
		out = append(out, string(b))
	}
	if len(out) == 0 {
		t.Errorf("%s: empty tarball", path)
	}
	return out
}

// TestAuthFileLearned: a command given --authfile (bootstrap mirror) scrubs that file's
// credentials from its output, whatever the file's mode.
func TestAuthFileLearned(t *testing.T) {
	dir := t.TempDir()
	auth := filepath.Join(dir, "auth.json")
	write(t, auth, []byte(`{"auths":{"r.example:5000":{"auth":"`+base64.StdEncoding.EncodeToString([]byte("lab:"+echoCanary))+`"}}}`), 0o644)
	var out, errb bytes.Buffer
	root, g := newRoot(&out, &errb)
	root.SetArgs([]string{"mirror", "-c", filepath.Join(dir, "missing.yaml"), "--authfile", auth, "file://" + filepath.Join(dir, "out")})
	_ = root.Execute()
	for _, form := range derivedForms(echoCanary, "lab") {
		if got := g.scrub.String("x " + form + " y"); strings.Contains(got, form) {
			t.Errorf("form %q of the auth file's password is not scrubbed: %q", form, got)
		}
	}
}
