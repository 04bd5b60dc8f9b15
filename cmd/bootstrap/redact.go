package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"

	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
	"github.com/bootstrap-dev/bootstrap/internal/redact"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// The command's one scrubber (globals.scrub) sits in front of stdout and stderr from the start
// and learns the site's secrets as soon as a command loads the profile; the session hands the
// same scrubber to the journal, the events, the log and the files stages write. Stages must not
// hand secrets out in the first place; this catches the mistake, and peers that echo credentials.

// addSiteSecrets teaches sc the profile's secrets: BMC and Git passwords (with the base64 of
// user:password a Basic Authorization header carries) and the registry auth files' credentials.
// Unreadable secrets are skipped here: the stage that needs one reports it.
func addSiteSecrets(sc *redact.Scrubber, s *site.Site) {
	if s == nil {
		return
	}
	for _, n := range s.Nodes {
		if v, err := site.ReadSecret(n.BMC.Password); err == nil {
			sc.AddBasic(n.BMC.Username, string(v))
		}
	}
	if v, err := site.ReadSecret(s.GitOps.Credentials.Password); err == nil {
		sc.AddBasic(s.GitOps.Credentials.Username, string(v))
		sc.AddBasic("x-access-token", string(v))
	}
	for _, f := range []string{s.Registry.AuthFile, s.Mirror.Source.AuthFile} {
		authFileSecrets(sc, f)
	}
}

// authFileSecrets adds the credentials of a container auth file.
func authFileSecrets(sc *redact.Scrubber, path string) {
	if path == "" {
		return
	}
	raw, err := readAuthFile(path)
	if err != nil {
		return
	}
	var f struct {
		Auths map[string]struct {
			Auth          string `json:"auth"`
			Username      string `json:"username"`
			Password      string `json:"password"`
			IdentityToken string `json:"identitytoken"`
		} `json:"auths"`
	}
	if json.Unmarshal(raw, &f) != nil {
		return
	}
	for _, a := range f.Auths {
		sc.Add(a.Auth)
		sc.Add(a.IdentityToken)
		if a.Password != "" {
			sc.AddBasic(a.Username, a.Password)
		}
		if dec, err := base64.StdEncoding.DecodeString(a.Auth); err == nil {
			if user, pass, ok := strings.Cut(string(dec), ":"); ok && pass != "" {
				sc.AddBasic(user, pass)
			}
		}
	}
}

// readAuthFile reads an auth file for redaction only: a regular file of at most
// site.MaxSecretFileSize, whatever its mode (a ~/.docker/config.json readable by others still
// holds credentials to scrub; the stage that uses the file enforces the rules).
func readAuthFile(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() || fi.Size() > site.MaxSecretFileSize {
		return nil, fmt.Errorf("%s: not a regular file of at most %d bytes", path, site.MaxSecretFileSize)
	}
	return io.ReadAll(io.LimitReader(f, site.MaxSecretFileSize))
}

// redactor adapts the scrubber to what a session hands the runner.
type redactor struct{ *redact.Scrubber }

// Event returns e with its text fields redacted.
func (r redactor) Event(e pipeline.Event) pipeline.Event {
	e.Message = r.String(e.Message)
	e.Step = r.String(e.Step)
	return e
}

// writeScrubbed renders into memory and writes the result scrubbed in one piece, so a secret a
// renderer writes in several pieces (templates write value by value) is still seen whole.
func writeScrubbed(sc *redact.Scrubber, w io.Writer, render func(io.Writer) error) error {
	var b bytes.Buffer
	if err := render(&b); err != nil {
		return err
	}
	_, err := w.Write(sc.Bytes(b.Bytes()))
	return err
}
