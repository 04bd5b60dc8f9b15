package preflight

import (
	"net"
	"strings"
	"testing"
)

func TestServeAddress(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	taken := l.Addr().String()
	for _, tc := range []struct {
		addr string
		want Status
		in   string
	}{
		{"127.0.0.1:0", Pass, "can listen"},
		{taken, Fail, "taken by another process"},
		{"192.0.2.1:8080", Fail, "has no address"}, // TEST-NET-1: never a local address; nothing is sent
		{"nonsense", Fail, "cannot listen"},
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
