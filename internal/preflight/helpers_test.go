package preflight

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/bootstrap-dev/bootstrap/e2e/lab/dnsd"
	"github.com/bootstrap-dev/bootstrap/e2e/lab/ntpd"
	"github.com/bootstrap-dev/bootstrap/internal/finding"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// startDNS starts a real DNS server on loopback for one test.
func startDNS(t *testing.T, zone dnsd.Zone) *dnsd.Server {
	t.Helper()
	s, err := dnsd.Start("127.0.0.1:0", zone)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	return s
}

// startNTP starts a real SNTP server on loopback for one test.
func startNTP(t *testing.T, offset time.Duration) *ntpd.Server {
	t.Helper()
	s, err := ntpd.Start("127.0.0.1:0", offset)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func addrs(ss ...string) []netip.Addr {
	out := make([]netip.Addr, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParseAddr(s)
	}
	return out
}

// testSite is a small site with VIPs on loopback.
func testSite() *site.Site {
	return &site.Site{
		APIVersion: site.APIVersion, Kind: site.Kind,
		Metadata: site.Metadata{Name: "t"},
		Cluster: site.Cluster{
			Name: "lab", BaseDomain: "example.test",
			APIVIPs: []string{"127.0.0.10"}, IngressVIPs: []string{"127.0.0.11"},
			RendezvousIP: "127.0.0.20",
		},
	}
}

// goodZone answers every name testSite needs correctly.
func goodZone() dnsd.Zone {
	return dnsd.Zone{
		"api.lab.example.test":     addrs("127.0.0.10"),
		"api-int.lab.example.test": addrs("127.0.0.10"),
		"*.apps.lab.example.test":  addrs("127.0.0.11"),
		"m0.lab.example.test":      addrs("127.0.0.20"),
	}
}

// runChecks runs the checks and indexes the results by name.
func runChecks(t *testing.T, cs []Check) map[string]CheckResult {
	t.Helper()
	rep := Runner{Timeout: 5 * time.Second}.Run(context.Background(), cs)
	out := map[string]CheckResult{}
	for _, c := range rep.Checks {
		out[c.Name] = c
	}
	return out
}

func wantStatus(t *testing.T, got map[string]CheckResult, name string, want finding.Status) CheckResult {
	t.Helper()
	r, ok := got[name]
	if !ok {
		names := make([]string, 0, len(got))
		for n := range got {
			names = append(names, n)
		}
		t.Fatalf("no check %q; have %v", name, names)
	}
	if r.Status != want {
		t.Errorf("%s: status %s, want %s: %s", name, r.Status, want, r.Message)
	}
	if r.Status != finding.Pass && r.Remedy == "" {
		t.Errorf("%s: %s without a remedy", name, r.Status)
	}
	return r
}
