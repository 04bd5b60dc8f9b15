package dnsd

import (
	"context"
	"net/netip"
	"testing"

	"github.com/miekg/dns"
)

func TestServer(t *testing.T) {
	s, err := Start("127.0.0.1:0", Zone{
		"api.lab.test.":   {netip.MustParseAddr("127.0.0.5"), netip.MustParseAddr("fd00::5")},
		"*.apps.lab.test": {netip.MustParseAddr("127.0.0.7")},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	ask := func(net, name string, qt uint16) *dns.Msg {
		t.Helper()
		m := new(dns.Msg)
		m.SetQuestion(name, qt)
		r, _, err := (&dns.Client{Net: net}).Exchange(m, s.Addr())
		if err != nil {
			t.Fatalf("%s %s: %v", net, name, err)
		}
		return r
	}
	for _, n := range []string{"udp", "tcp"} {
		if r := ask(n, "API.lab.test.", dns.TypeA); len(r.Answer) != 1 || r.Answer[0].(*dns.A).A.String() != "127.0.0.5" || !r.Authoritative {
			t.Errorf("%s A api: %v", n, r)
		}
		if r := ask(n, "api.lab.test.", dns.TypeAAAA); len(r.Answer) != 1 || r.Answer[0].(*dns.AAAA).AAAA.String() != "fd00::5" {
			t.Errorf("%s AAAA api: %v", n, r)
		}
		if r := ask(n, "x1.apps.lab.test.", dns.TypeA); len(r.Answer) != 1 || r.Answer[0].Header().Name != "x1.apps.lab.test." {
			t.Errorf("%s wildcard: %v", n, r)
		}
		if r := ask(n, "a.b.apps.lab.test.", dns.TypeA); len(r.Answer) != 1 {
			t.Errorf("%s: a wildcard covers deeper names too (RFC 4592), got %v", n, r)
		}
		if r := ask(n, "apps.lab.test.", dns.TypeA); r.Rcode != dns.RcodeNameError {
			t.Errorf("%s: a wildcard does not cover its own parent, got %v", n, r)
		}
		if r := ask(n, "nope.lab.test.", dns.TypeA); r.Rcode != dns.RcodeNameError {
			t.Errorf("%s nope: rcode %s", n, dns.RcodeToString[r.Rcode])
		}
	}
}
