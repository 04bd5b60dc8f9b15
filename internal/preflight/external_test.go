package preflight

import (
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/bmc/bmctest"
	"github.com/bootstrap-dev/bootstrap/internal/finding"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// TestExternalISO: with iso.baseURL on another web server, preflight does not probe the local
// listen address; it fetches the ISO's volume descriptor from that server with a ranged GET,
// and fails when nothing answers there.
func TestExternalISO(t *testing.T) {
	iso := bmctest.NewISOServer()
	defer iso.Close()
	s := &site.Site{ISO: site.ISO{ServeAddress: "127.0.0.1:1", BaseURL: iso.URL() + "/isos"}}
	got := runChecks(t, serveChecks(s, Options{}))
	if len(got) != 1 {
		t.Fatalf("checks %v; want one URL check", got)
	}
	wantStatus(t, got, "iso url "+iso.URL()+"/isos/agent.x86_64.iso", finding.Pass)
	if iso.RangeRequests() != 1 {
		t.Errorf("%d range requests, want 1", iso.RangeRequests())
	}
	s.ISO.BaseURL = "http://127.0.0.1:2"
	wantStatus(t, runChecks(t, serveChecks(s, Options{})), "iso url http://127.0.0.1:2/agent.x86_64.iso", finding.Fail)
	s.ISO.BaseURL = ""
	if got := runChecks(t, serveChecks(s, Options{})); len(got) != 1 {
		t.Errorf("served here: %v; want the listen check", got)
	} else if _, ok := got["iso serve address 127.0.0.1:1"]; !ok {
		t.Errorf("served here: %v; want the listen check", got)
	}
}
