package adversarial

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/redact"
)

// encodings a peer may hand a secret back in.
func encodings(secret string) map[string]string {
	u := func(v string) string {
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
	return map[string]string{
		"plain":        secret,
		"json \\u":     u(secret),
		"json first":   u(secret[:1]) + secret[1:], // `\u0070assword`
		"url":          url.QueryEscape(secret),
		"url each":     pct(secret),
		"base64":       base64.StdEncoding.EncodeToString([]byte(secret)),
		"base64 basic": base64.StdEncoding.EncodeToString([]byte("root:" + secret)),
	}
}

// TestSecretAcrossClipBoundary: a secret planted so that a 512-byte clip falls inside it, in every
// encoding, is redacted before it is cut: no form of it, whole or in part, is left.
func TestSecretAcrossClipBoundary(t *testing.T) {
	const secret = "p@ssw0rd-Canary"
	sc := redact.New()
	sc.AddBasic("root", secret)
	for name, form := range encodings(secret) {
		for back := 1; back < len(form); back++ {
			body := strings.Repeat("-", 512-back) + " " + form + " end"
			got := sc.Clip([]byte(body), 512)
			tail := strings.TrimSuffix(got, redact.Truncated)
			for n := 5; n <= len(form); n++ {
				if strings.HasSuffix(tail, form[:n]) {
					t.Fatalf("%s cut %d bytes in: %q shows %q", name, back, tail[len(tail)-40:], form[:n])
				}
			}
		}
	}
}

// TestStoredBodyDecoded: a stored BMC body with the password in JSON escapes reaches no output in
// any form, whatever the chunking.
func TestStoredBodyDecoded(t *testing.T) {
	const secret = "p@ssw0rd-Canary"
	sc := redact.New(secret)
	for name, form := range encodings(secret) {
		if name == "base64 basic" {
			continue
		}
		body := `{"UserName":"root","Password":"` + form + `","Pad":"` + strings.Repeat("x", 200<<10) + `"}`
		var out bytes.Buffer
		w := sc.Stream(&out, 64<<10)
		for i := 0; i < len(body); i += 1000 {
			w.Write([]byte(body[i:min(len(body), i+1000)]))
		}
		w.Close()
		if strings.Contains(out.String(), form) || !strings.Contains(out.String(), redact.Mark) {
			t.Errorf("%s: stored body keeps the secret", name)
		}
	}
}
