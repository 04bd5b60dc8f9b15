package mirror

import (
	"fmt"

	"github.com/bootstrap-dev/bootstrap/internal/redact"
)

// maxPeerError bounds the text of one failed registry operation. The registry client appends a
// failed request's body to its error, up to 8 MiB (regclient v0.11 reghttp.ReadBodyLimit): a
// registry or proxy answering with a page, or echoing the request, would otherwise put megabytes
// into the journal, the event stream and the terminal. 2 KiB keeps every real error whole.
const maxPeerError = 2 << 10

// peerTextError is a registry error whose text was redacted and then clipped; the chain below
// it is unchanged, so errors.Is/As (Temporary, the host circuit) still see what failed.
type peerTextError struct {
	err  error
	text string
}

func (e *peerTextError) Error() string { return e.text }
func (e *peerTextError) Unwrap() error { return e.err }

// clipPeer bounds err's text to maxPeerError bytes, redacting the run's registry credentials
// first (a password the cut fell inside would no longer be recognised downstream).
func (o Options) clipPeer(err error) error {
	if err == nil {
		return nil
	}
	s := err.Error()
	if len(s) <= maxPeerError {
		return err
	}
	text := o.scrub.ClipString(s, maxPeerError)
	return &peerTextError{err: err, text: fmt.Sprintf("%s [a registry's answer of %d bytes, cut at %d]", text, len(s), maxPeerError)}
}

// peerScrubber knows the credentials of the endpoints' auth files, in every form a registry
// could echo them (Basic header, JSON, URL encoding). A file that cannot be read adds nothing:
// the client that needs it reports why.
func peerScrubber(o Options) *redact.Scrubber {
	sc := redact.New()
	for _, f := range []string{o.Source.AuthFile, o.Dest.AuthFile} {
		if f == "" {
			continue
		}
		auths, err := readAuthFile(f)
		if err != nil {
			continue
		}
		for _, c := range auths {
			sc.AddBasic(c.user, c.pass)
		}
	}
	return sc
}
