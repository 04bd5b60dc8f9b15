package preflight

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/bmc/bmctest"
	"github.com/bootstrap-dev/bootstrap/internal/finding"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// TestBMCChecks: three simulated iDRACs: one right, one with the wrong password in the profile,
// one whose MACs belong to another server; plus a BMC address nothing answers on. Each bad node
// fails by name with a remedy, and no BMC sees a single write.
func TestBMCChecks(t *testing.T) {
	cert, err := bmctest.NewCert()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	pw := filepath.Join(dir, "bmc-password")
	wrong := filepath.Join(dir, "bmc-wrong")
	for p, v := range map[string]string{ca: string(cert.CAPEM), pw: "calvin\n", wrong: "hunter2\n"} {
		if err := os.WriteFile(p, []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	good := bmctest.New(bmctest.Options{Cert: cert, MACs: []string{"b0:7b:25:00:00:01"}})
	badpw := bmctest.New(bmctest.Options{Cert: cert, MACs: []string{"b0:7b:25:00:00:02"}})
	swapped := bmctest.New(bmctest.Options{Cert: cert, MACs: []string{"b0:7b:25:00:00:99"}})
	for _, b := range []*bmctest.BMC{good, badpw, swapped} {
		defer b.Close()
	}
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := "https://" + l.Addr().String()
	l.Close()
	node := func(name, addr, mac, secret string) site.Node {
		return site.Node{Name: name, BootMAC: mac, Interfaces: []site.Interface{{Name: "eno1", MACAddress: mac}},
			BMC: site.BMC{Address: addr, Username: "root", CAFile: ca, Password: site.SecretRef{File: secret}}}
	}
	s := &site.Site{ISO: site.ISO{ServeAddress: "10.0.0.1:8080"}, Nodes: []site.Node{
		node("m0", good.URL(), "B0:7B:25:00:00:01", pw),
		node("m1", badpw.URL(), "b0:7b:25:00:00:02", wrong),
		node("m2", swapped.URL(), "b0:7b:25:00:00:03", pw),
		node("m3", dead, "b0:7b:25:00:00:04", pw),
	}}
	got := runChecks(t, bmcChecks(s, Options{}))
	// "calvin", the iDRAC factory default, is accepted with a warning naming the risk.
	if r := wantStatus(t, got, "bmc m0 credentials", finding.Warn); !strings.Contains(r.Message, "6 characters") || !strings.Contains(r.Message, "not scrubbed") {
		t.Errorf("m0 credentials: %q", r.Message)
	}
	for _, c := range []string{"reachable", "tls", "system", "redfish-version", "firmware", "virtual-media", "boot-target", "stale-media", "iso-url", "mac", "sessions"} {
		wantStatus(t, got, "bmc m0 "+c, finding.Pass)
	}
	r := wantStatus(t, got, "bmc m1 credentials", finding.Fail)
	if !strings.Contains(r.Remedy, "password") {
		t.Errorf("m1 remedy: %q", r.Remedy)
	}
	r = wantStatus(t, got, "bmc m2 mac", finding.Fail)
	if !strings.Contains(r.Message, "b0:7b:25:00:00:03") || !strings.Contains(r.Remedy, "m2") {
		t.Errorf("m2: %q / %q", r.Message, r.Remedy)
	}
	wantStatus(t, got, "bmc m3 reachable", finding.Fail)
	// m3's other checks are not run behind the failed connection: one row says so and names them.
	var folded *CheckResult
	for n, r := range got {
		if strings.HasPrefix(n, "bmc m3 (") {
			folded = &r
		}
	}
	if folded == nil || folded.Status != finding.Warn || !strings.HasPrefix(folded.Message, "not checked because bmc m3 reachable failed: ") ||
		!strings.Contains(folded.Message, "bmc m3 mac") {
		t.Errorf("m3's skipped checks: %+v, want one row naming them", folded)
	}
	for n, r := range got {
		if strings.Contains(r.Message+r.Remedy, "hunter2") || strings.Contains(r.Message+r.Remedy, "calvin") {
			t.Errorf("%s shows a password", n)
		}
	}
	for i, b := range []*bmctest.BMC{good, badpw, swapped} {
		if st := b.Stats(); st.Writes != 0 || st.PowerActions != 0 || st.ActiveSessions != 0 {
			t.Errorf("BMC %d changed by preflight: %+v", i, st)
		}
	}
}

// TestBMCChecksKnowTheISOURLs: once the iso stage has published the node's URL, media inserted
// at that URL (an earlier boot) is not stale, and another image still is.
func TestBMCChecksKnowTheISOURLs(t *testing.T) {
	cert, err := bmctest.NewCert()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ca, pw := filepath.Join(dir, "ca.pem"), filepath.Join(dir, "bmc-password")
	for p, v := range map[string]string{ca: string(cert.CAPEM), pw: "calvin\n"} {
		if err := os.WriteFile(p, []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ours := "http://10.0.0.1:8080/iso/m0/agent.x86_64.iso"
	booted := bmctest.New(bmctest.Options{Cert: cert, MACs: []string{"b0:7b:25:00:00:01"}, StaleMedia: ours})
	defer booted.Close()
	s := &site.Site{ISO: site.ISO{ServeAddress: "10.0.0.1:8080"}, Nodes: []site.Node{{Name: "m0", BootMAC: "b0:7b:25:00:00:01",
		Interfaces: []site.Interface{{Name: "eno1", MACAddress: "b0:7b:25:00:00:01"}},
		BMC:        site.BMC{Address: booted.URL(), Username: "root", CAFile: ca, Password: site.SecretRef{File: pw}}}}}
	r := wantStatus(t, runChecks(t, bmcChecks(s, Options{})), "bmc m0 stale-media", finding.Warn)
	if !strings.Contains(r.Message, ours) {
		t.Errorf("without the iso output: %q", r.Message)
	}
	got := runChecks(t, bmcChecks(s, Options{ISOURLs: map[string]string{"m0": ours}}))
	wantStatus(t, got, "bmc m0 stale-media", finding.Pass)
	if r := wantStatus(t, got, "bmc m0 iso-url", finding.Pass); !strings.Contains(r.Message, fmt.Sprint(len(ours))) {
		t.Errorf("iso-url measured another URL: %q", r.Message)
	}
}
