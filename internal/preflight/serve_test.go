package preflight

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/finding"
)

func TestServeAddress(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() { // a service that is not HTTP: it hangs up at once
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	taken := l.Addr().String()
	// What `bootstrap serve` looks like from outside: the agent ISO answers HEAD.
	iso := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/agent.x86_64.iso" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Length", "1048576")
	}))
	defer iso.Close()
	isoSrv := iso.Listener.Addr().String()
	for _, tc := range []struct {
		addr string
		want finding.Status
		in   string
	}{
		{"127.0.0.1:0", finding.Pass, "can listen"},
		{taken, finding.Fail, "does not serve the agent ISO"},
		{isoSrv, finding.Pass, "already serves"},
		{"192.0.2.1:8080", finding.Fail, "has no address"}, // TEST-NET-1: never a local address; nothing is sent
		{"nonsense", finding.Fail, "cannot listen"},
	} {
		s := testSite()
		s.ISO.ServeAddress = tc.addr
		got := runChecks(t, serveChecks(s, Options{}))
		r := wantStatus(t, got, "iso serve address "+tc.addr, tc.want)
		if !strings.Contains(r.Message, tc.in) {
			t.Errorf("%s: message %q does not contain %q", tc.addr, r.Message, tc.in)
		}
	}
}
