package bmc

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestPeerMessageClipped: a BMC error body is the BMC's to fill (an echo of the request, a page
// dump); what is kept of it is bounded and still valid UTF-8.
func TestPeerMessageClipped(t *testing.T) {
	big := strings.Repeat("é", 10<<10)
	body, _ := json.Marshal(map[string]any{"error": map[string]any{"code": "Base.1.8.GeneralError", "message": big}})
	e := parseRedfishError("GET", "/redfish/v1/", 500, body)
	if len(e.Message) > maxPeerMessage+len("… (truncated)") || !strings.HasSuffix(e.Message, "(truncated)") || !utf8.ValidString(e.Message) {
		t.Fatalf("message of %d bytes kept: %q...", len(e.Message), e.Message[:min(40, len(e.Message))])
	}
}
