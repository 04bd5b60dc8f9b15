package preflight

import (
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/finding"
)

func listen(t *testing.T, addr string) int {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return l.Addr().(*net.TCPAddr).Port
}

func TestVIPInUse(t *testing.T) {
	port := listen(t, "127.0.0.77:0")
	s := testSite()
	s.Cluster.APIVIPs = []string{"127.0.0.77"}     // something serves on it
	s.Cluster.IngressVIPs = []string{"127.0.0.78"} // free: loopback resets do not count
	o := Options{VIPPorts: []int{port}}.withDefaults()
	got := runChecks(t, vipChecks(s, o))
	r := wantStatus(t, got, "vip 127.0.0.77 (api) free", finding.Fail)
	if !strings.Contains(r.Message, "accepted TCP") {
		t.Errorf("message %q", r.Message)
	}
	wantStatus(t, got, "vip 127.0.0.78 (ingress) free", finding.Pass)

	// Once the cluster is installed, the VIPs answer by design.
	o.ClusterInstalled = true
	got = runChecks(t, vipChecks(s, o))
	wantStatus(t, got, "vip 127.0.0.77 (api) free", finding.Pass)
}

// A listener on every loopback address (as 0.0.0.0 is) also answers on the control address:
// that says nothing about the VIP and must not fail the check.
func TestVIPWildcardListenerNotCounted(t *testing.T) {
	port := listen(t, loopbackControl.String()+":0")
	listen(t, "127.0.0.79:"+strconv.Itoa(port))
	s := testSite()
	s.Cluster.APIVIPs, s.Cluster.IngressVIPs = []string{"127.0.0.79"}, nil
	got := runChecks(t, vipChecks(s, Options{VIPPorts: []int{port}}.withDefaults()))
	r := wantStatus(t, got, "vip 127.0.0.79 (api) free", finding.Pass)
	if !strings.Contains(r.Message, "wildcard") {
		t.Errorf("message %q should explain the discounted port", r.Message)
	}
}

func TestVIPHeldByJumpHost(t *testing.T) {
	s := testSite()
	s.Cluster.APIVIPs, s.Cluster.IngressVIPs = []string{"127.0.0.1"}, nil // lo holds it
	got := runChecks(t, vipChecks(s, Options{VIPPorts: []int{1}}.withDefaults()))
	r := wantStatus(t, got, "vip 127.0.0.1 (api) free", finding.Fail)
	if !strings.Contains(r.Message, "jump host itself") {
		t.Errorf("message %q", r.Message)
	}
}

func TestVIPBadAddress(t *testing.T) {
	s := testSite()
	s.Cluster.APIVIPs, s.Cluster.IngressVIPs = []string{"10.0.0.300"}, nil
	got := runChecks(t, vipChecks(s, Options{}.withDefaults()))
	wantStatus(t, got, "vip 10.0.0.300 (api) free", finding.Fail)
}

func TestARPTable(t *testing.T) {
	p := filepath.Join(t.TempDir(), "arp")
	table := `IP address       HW type     Flags       HW address            Mask     Device
10.0.0.5         0x1         0x2         52:54:00:12:34:56     *        eth0
10.0.0.6         0x1         0x0         00:00:00:00:00:00     *        eth0
`
	if err := os.WriteFile(p, []byte(table), 0o644); err != nil {
		t.Fatal(err)
	}
	if mac, ok := arpComplete(p, netip.MustParseAddr("10.0.0.5")); !ok || mac != "52:54:00:12:34:56" {
		t.Errorf("10.0.0.5: got %q %v, want the complete entry", mac, ok)
	}
	if _, ok := arpComplete(p, netip.MustParseAddr("10.0.0.6")); ok {
		t.Error("10.0.0.6: an incomplete entry (no reply) must not count")
	}
	if _, ok := arpComplete(p, netip.MustParseAddr("10.0.0.7")); ok {
		t.Error("10.0.0.7: absent entry must not count")
	}
}
