package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// redactor is the last line of defence against secrets in the journal, logs and events: it knows
// the secret values the profile references and replaces any occurrence with [redacted]. Stages
// must not hand secrets to the runner in the first place; this catches the mistake if one does.
type redactor struct{ secrets [][]byte }

const redacted = "[redacted]"

// newRedactor reads the profile's secrets (BMC and Git passwords, the registry auth file's
// credentials). Unreadable secrets are skipped here: the stage that needs one reports it.
func newRedactor(s *site.Site) *redactor {
	r := &redactor{}
	add := func(b []byte) {
		b = bytes.TrimSpace(b)
		if len(b) >= 4 { // shorter values would redact ordinary text
			r.secrets = append(r.secrets, b)
		}
	}
	if s == nil {
		return r
	}
	for _, n := range s.Nodes {
		if v, err := site.ReadSecret(n.BMC.Password); err == nil {
			add(v)
		}
	}
	if v, err := site.ReadSecret(s.GitOps.Credentials.Password); err == nil {
		add(v)
	}
	for _, f := range []string{s.Registry.AuthFile, s.Mirror.Source.AuthFile} {
		for _, v := range authFileSecrets(f) {
			add(v)
		}
	}
	// Longest first, so a secret containing another is replaced whole.
	sort.Slice(r.secrets, func(i, j int) bool { return len(r.secrets[i]) > len(r.secrets[j]) })
	return r
}

// authFileSecrets returns the auth strings of a container auth file and the credentials they encode.
func authFileSecrets(path string) [][]byte {
	if path == "" {
		return nil
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var f struct {
		Auths map[string]struct {
			Auth     string `json:"auth"`
			Password string `json:"password"`
		} `json:"auths"`
	}
	if json.Unmarshal(raw, &f) != nil {
		return nil
	}
	var out [][]byte
	for _, a := range f.Auths {
		for _, v := range []string{a.Auth, a.Password} {
			if v != "" {
				out = append(out, []byte(v))
			}
		}
		if dec, err := decodeBase64(a.Auth); err == nil {
			if _, pass, ok := strings.Cut(string(dec), ":"); ok && pass != "" {
				out = append(out, []byte(pass))
			}
		}
	}
	return out
}

// Bytes returns b with every secret replaced.
func (r *redactor) Bytes(b []byte) []byte {
	for _, s := range r.secrets {
		if bytes.Contains(b, s) {
			b = bytes.ReplaceAll(b, s, []byte(redacted))
		}
	}
	return b
}

func (r *redactor) String(s string) string {
	if len(r.secrets) == 0 {
		return s
	}
	return string(r.Bytes([]byte(s)))
}

// Event returns e with its text fields redacted.
func (r *redactor) Event(e pipeline.Event) pipeline.Event {
	e.Message = r.String(e.Message)
	e.Step = r.String(e.Step)
	return e
}

// Writer wraps w so every write is redacted (writes are whole log records).
func (r *redactor) Writer(w io.Writer) io.Writer { return redactWriter{r, w} }

type redactWriter struct {
	r *redactor
	w io.Writer
}

func (w redactWriter) Write(p []byte) (int, error) {
	if _, err := w.w.Write(w.r.Bytes(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

func decodeBase64(s string) ([]byte, error) { return base64.StdEncoding.DecodeString(s) }
