package preflight

import (
	"context"
	"net"
	"strings"
	"testing"

	"github.com/bootstrap-dev/bootstrap/e2e/lab/dnsd"
	"github.com/bootstrap-dev/bootstrap/internal/finding"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

func dnsOnly(s *site.Site, o Options) []Check { return dnsChecks(s, o.withDefaults()) }

func TestDNSAgainstConfiguredServer(t *testing.T) {
	srv := startDNS(t, goodZone())
	s := testSite()
	s.Cluster.DNSServers = []string{srv.Addr()}
	s.Nodes = []site.Node{{Name: "m0", Role: site.RoleMaster, NetworkConfig: map[string]any{
		"interfaces": []any{map[string]any{"name": "eno1", "ipv4": map[string]any{
			"enabled": true, "address": []any{map[string]any{"ip": "127.0.0.20", "prefix-length": 24}}}}},
	}}}

	got := runChecks(t, dnsOnly(s, Options{}))
	for _, n := range []string{"dns api.lab.example.test", "dns api-int.lab.example.test", "dns *.apps.lab.example.test", "dns m0.lab.example.test"} {
		r := wantStatus(t, got, n, finding.Pass)
		if !strings.Contains(r.Message, srv.Addr()) {
			t.Errorf("%s: message %q does not name the server", n, r.Message)
		}
	}

	// Break each record in a different way; each must be reported.
	z := goodZone()
	z["api.lab.example.test"] = addrs("127.0.0.99")                   // wrong address
	z["api-int.lab.example.test"] = addrs("127.0.0.10", "127.0.0.98") // an extra, stale address
	delete(z, "*.apps.lab.example.test")                              // no wildcard
	z["m0.lab.example.test"] = addrs("127.0.0.21")                    // node name points elsewhere
	srv.Set(z)
	got = runChecks(t, dnsOnly(s, Options{}))
	r := wantStatus(t, got, "dns api.lab.example.test", finding.Fail)
	if !strings.Contains(r.Message, "127.0.0.99") || !strings.Contains(r.Remedy, "127.0.0.10") {
		t.Errorf("api: message %q / remedy %q should name what was found and what is wanted", r.Message, r.Remedy)
	}
	wantStatus(t, got, "dns api-int.lab.example.test", finding.Fail)
	r = wantStatus(t, got, "dns *.apps.lab.example.test", finding.Fail)
	if !strings.Contains(r.Message, "does not resolve") || !strings.Contains(r.Message, ".apps.lab.example.test") {
		t.Errorf("apps: message %q", r.Message)
	}
	wantStatus(t, got, "dns m0.lab.example.test", finding.Fail)

	// A node without a record is a warning, not a failure.
	delete(z, "m0.lab.example.test")
	srv.Set(z)
	got = runChecks(t, dnsOnly(s, Options{}))
	wantStatus(t, got, "dns m0.lab.example.test", finding.Warn)
}

func TestDNSEveryServerMustAgree(t *testing.T) {
	good := startDNS(t, goodZone())
	z := goodZone()
	z["api.lab.example.test"] = addrs("127.0.0.50")
	bad := startDNS(t, z)
	s := testSite()
	s.Cluster.DNSServers = []string{good.Addr(), bad.Addr()}
	got := runChecks(t, dnsOnly(s, Options{}))
	r := wantStatus(t, got, "dns api.lab.example.test", finding.Fail)
	if !strings.Contains(r.Message, bad.Addr()) || !strings.Contains(r.Message, good.Addr()) {
		t.Errorf("message %q should report both servers", r.Message)
	}
	wantStatus(t, got, "dns api-int.lab.example.test", finding.Pass)
}

func TestDNSDualStackPartialIsWarning(t *testing.T) {
	z := goodZone()
	srv := startDNS(t, z)
	s := testSite()
	s.Cluster.DNSServers = []string{srv.Addr()}
	s.Cluster.APIVIPs = []string{"127.0.0.10", "fd00::10"}
	got := runChecks(t, dnsOnly(s, Options{}))
	r := wantStatus(t, got, "dns api.lab.example.test", finding.Warn)
	if !strings.Contains(r.Message, "missing fd00::10") {
		t.Errorf("message %q", r.Message)
	}
	z["api.lab.example.test"] = addrs("127.0.0.10", "fd00::10")
	srv.Set(z)
	got = runChecks(t, dnsOnly(s, Options{}))
	wantStatus(t, got, "dns api.lab.example.test", finding.Pass)
}

func TestDNSUnreachableServerFails(t *testing.T) {
	srv := startDNS(t, goodZone())
	addr := srv.Addr()
	_ = srv.Close(context.Background())
	s := testSite()
	s.Cluster.DNSServers = []string{addr}
	got := runChecks(t, dnsOnly(s, Options{}))
	r := wantStatus(t, got, "dns api.lab.example.test", finding.Fail)
	if !strings.Contains(r.Remedy, "DNS server answers") {
		t.Errorf("remedy %q", r.Remedy)
	}
}

// The system-resolver path (no cluster.dnsServers) uses Go's resolver; pointed at the loopback
// server it must give the same verdicts.
func TestDNSSystemResolver(t *testing.T) {
	srv := startDNS(t, goodZone())
	r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, srv.Addr())
	}}
	s := testSite()
	got := runChecks(t, dnsOnly(s, Options{Resolver: r}))
	res := wantStatus(t, got, "dns api.lab.example.test", finding.Pass)
	if !strings.Contains(res.Message, "system resolver") {
		t.Errorf("message %q should say the system resolver was used", res.Message)
	}
	wantStatus(t, got, "dns *.apps.lab.example.test", finding.Pass)

	z := goodZone()
	z["api-int.lab.example.test"] = addrs("127.0.0.11")
	delete(z, "api.lab.example.test")
	srv.Set(z)
	got = runChecks(t, dnsOnly(s, Options{Resolver: r}))
	wantStatus(t, got, "dns api.lab.example.test", finding.Fail)
	wantStatus(t, got, "dns api-int.lab.example.test", finding.Fail)
}

// Single-node sites have no VIPs: the names must resolve to the node's address.
func TestDNSSingleNodeUsesRendezvousIP(t *testing.T) {
	srv := startDNS(t, dnsd.Zone{
		"api.lab.example.test":     addrs("127.0.0.20"),
		"api-int.lab.example.test": addrs("127.0.0.20"),
		"*.apps.lab.example.test":  addrs("127.0.0.10"),
	})
	s := testSite()
	s.Cluster.APIVIPs, s.Cluster.IngressVIPs = nil, nil
	s.Cluster.DNSServers = []string{srv.Addr()}
	got := runChecks(t, dnsOnly(s, Options{}))
	wantStatus(t, got, "dns api.lab.example.test", finding.Pass)
	r := wantStatus(t, got, "dns *.apps.lab.example.test", finding.Fail)
	if !strings.Contains(r.Remedy, "rendezvousIP") {
		t.Errorf("remedy %q should explain where the wanted address comes from", r.Remedy)
	}
}

// The jump host's own resolver must find the API too (install and configure reach it from
// there); a wrong or missing answer is a warning, as the nodes may still be fine.
func TestDNSFromTheJumpHost(t *testing.T) {
	srv := startDNS(t, goodZone())
	r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, srv.Addr())
	}}
	c := jumpHostAPI("lab.example.test", addrs("127.0.0.10"), Options{Resolver: r}.withDefaults())
	run := func() finding.Finding { return c.run(context.Background(), c.targets) }
	if res := run(); res.Status != finding.Pass || !strings.Contains(res.Message, "system resolver") {
		t.Errorf("good: %+v", res)
	}
	z := goodZone()
	z["api.lab.example.test"] = addrs("127.0.0.66")
	srv.Set(z)
	if res := run(); res.Status != finding.Warn || !strings.Contains(res.Remedy, "/etc/hosts") {
		t.Errorf("wrong answer: %+v", res)
	}
	delete(z, "api.lab.example.test")
	srv.Set(z)
	if res := run(); res.Status != finding.Warn {
		t.Errorf("missing: %+v", res)
	}
}

func TestAllLoopback(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want bool
	}{
		{[]string{"127.0.0.1:5353", "::1", "[::1]:53"}, true},
		{[]string{"127.0.0.1", "10.0.0.53"}, false},
		{[]string{"dns.example.test"}, false},
	} {
		if got := allLoopback(tc.in); got != tc.want {
			t.Errorf("allLoopback(%v) = %v", tc.in, got)
		}
	}
}
