package bmc

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/bootstrap-dev/bootstrap/internal/redact"
)

// TestPeerMessageClipped: a BMC error body is the BMC's to fill (an echo of the request, a page
// dump); what is kept of it is bounded and still valid UTF-8.
func TestPeerMessageClipped(t *testing.T) {
	big := strings.Repeat("é", 10<<10)
	body, _ := json.Marshal(map[string]any{"error": map[string]any{"code": "Base.1.8.GeneralError", "message": big}})
	e := parseRedfishError("GET", "/redfish/v1/", 500, body, nil)
	if len(e.Message) > maxPeerMessage+len(redact.Truncated) || !strings.HasSuffix(e.Message, "(truncated)") || !utf8.ValidString(e.Message) {
		t.Fatalf("message of %d bytes kept: %q...", len(e.Message), e.Message[:min(40, len(e.Message))])
	}
}

// TestPeerMessageRedactedBeforeClip: a BMC echoing the client's password where the clip falls is
// redacted whole, not cut and shown in part.
func TestPeerMessageRedactedBeforeClip(t *testing.T) {
	const pass = "Idrac-Pa55word!"
	sc := redact.New()
	sc.AddBasic("root", pass)
	for back := 1; back < len(pass); back++ {
		msg := strings.Repeat("x", maxPeerMessage-back) + " " + pass + " tail"
		body, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg}})
		e := parseRedfishError("POST", "/redfish/v1/x", 400, body, sc)
		if strings.Contains(e.Message, pass[:4]) {
			t.Fatalf("cut %d into the password: %q", back, e.Message[len(e.Message)-40:])
		}
	}
}
