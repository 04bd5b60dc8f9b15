package gather

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/redact"
)

// TestLongLineSecretAcrossCut: a BMC's one-line JSON body longer than maxLine with the password
// written as \u00XX escapes (`\u0070assword`) exactly where a piece is cut is stored redacted:
// the decoder-redactor sees it whole.
func TestLongLineSecretAcrossCut(t *testing.T) {
	const secret = "bmc-Secret-99"
	var esc strings.Builder
	for _, r := range secret {
		fmt.Fprintf(&esc, "\\u%04x", r)
	}
	sc := redact.New(secret)
	for _, at := range []int{maxLine - 11, maxLine - 30, maxLine - 87, maxLine - 256 - 30} { // the escaped secret starts 10 bytes after at {
		body := `{"Password":"` + strings.Repeat("x", at-len(`{"Password":"`)) + `", "Msg":"` + esc.String() + `"}` + strings.Repeat(" ", 3*maxLine)
		var out bytes.Buffer
		l := &lineScrubber{w: &out, scrub: sc.Bytes}
		for i := 0; i < len(body); i += 4096 {
			l.Write([]byte(body[i:min(len(body), i+4096)]))
		}
		l.flush()
		got := out.String()
		if strings.Contains(got, `\u0062\u006d`) || strings.Contains(got, secret) || !strings.Contains(got, redact.Mark) || len(got) < len(body)-len(esc.String()) {
			t.Errorf("secret at %d: stored %d bytes, marks %d", at, len(got), strings.Count(got, redact.Mark))
		}
	}
}
