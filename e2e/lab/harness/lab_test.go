package harness

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/finding"
	"github.com/bootstrap-dev/bootstrap/internal/preflight"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// loadSite reads the written profile back strictly (unknown fields are errors), as site.Load will.
func loadSite(t *testing.T, path string) *site.Site {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b = b[bytes.IndexByte(b, '{'):] // skip the comment header
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var s site.Site
	if err := dec.Decode(&s); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	s.File = path
	return &s
}

func upLab(t *testing.T, dir string, o Options) *Lab {
	t.Helper()
	l, err := New(dir, Default(o)...)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Up(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Down(context.Background()) })
	return l
}

func preflightLab(t *testing.T, l *Lab) preflight.Report {
	t.Helper()
	s := loadSite(t, l.SiteFile)
	checks := preflight.Checks(s, preflight.Options{WorkDir: filepath.Join(l.Dir, ".bootstrap"), MinFreeBytes: 1})
	return preflight.Runner{Timeout: 5 * time.Second}.Run(context.Background(), checks)
}

// The lab exists so that preflight passes for real against it, and fails for real when a
// stand-in is broken.
func TestLabPassesPreflight(t *testing.T) {
	l := upLab(t, t.TempDir(), Options{})
	rep := preflightLab(t, l)
	var names []string
	for _, c := range rep.Checks {
		names = append(names, c.Name)
		if c.Status != finding.Pass {
			t.Errorf("%s: %s %s (%s)", c.Name, c.Status, c.Message, c.Remedy)
		}
	}
	for _, want := range []string{"dns api.lab.bootstrap.test", "dns *.apps.lab.bootstrap.test", "dns gpu-1.lab.bootstrap.test",
		"ntp " + l.Site.Cluster.NTPSources[0], "file cluster.sshKeyFile", "file nodes[0].bmc.password.file (+4 more)",
		"vip " + l.IP(5).String() + " (api) free", "iso serve address " + l.Site.ISO.ServeAddress} {
		if !strings.Contains(strings.Join(names, "\n"), want) {
			t.Errorf("no check %q among %v", want, names)
		}
	}
}

func TestLabSkewedClockFailsPreflight(t *testing.T) {
	l := upLab(t, t.TempDir(), Options{NTPOffset: 5 * time.Minute})
	rep := preflightLab(t, l)
	var fe *preflight.FailedError
	if err := rep.Err(); !errors.As(err, &fe) || len(fe.Checks) != 1 || !strings.HasPrefix(fe.Checks[0], "ntp ") {
		t.Fatalf("want exactly the ntp check failing, got %v", err)
	}
}

// One lab dir keeps its addresses and ports across starts, so its profile does not change and a
// resumed run is not invalidated by the lab.
func TestLabDirIsStable(t *testing.T) {
	dir := t.TempDir()
	l := upLab(t, dir, Options{})
	first, err := os.ReadFile(l.SiteFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Down(context.Background()); err != nil {
		t.Fatal(err)
	}
	l2 := upLab(t, dir, Options{})
	second, err := os.ReadFile(l2.SiteFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first, second) {
		t.Errorf("profile changed between starts:\n%s\n---\n%s", first, second)
	}
}

type fakeComponent struct {
	name    string
	failing bool
	log     *[]string
}

func (f *fakeComponent) Name() string { return f.name }
func (f *fakeComponent) Start(context.Context, *Lab) error {
	if f.failing {
		return errors.New("no luck")
	}
	*f.log = append(*f.log, "start "+f.name)
	return nil
}
func (f *fakeComponent) Configure(*site.Site, *Lab) error { return nil }
func (f *fakeComponent) Stop(context.Context) error {
	*f.log = append(*f.log, "stop "+f.name)
	return nil
}

// A component that fails to start leaves nothing running: the ones before it are stopped, in
// reverse order.
func TestLabUpFailureStopsEverything(t *testing.T) {
	var log []string
	l, err := New(t.TempDir(), &fakeComponent{name: "a", log: &log}, &fakeComponent{name: "b", log: &log},
		&fakeComponent{name: "c", failing: true, log: &log})
	if err != nil {
		t.Fatal(err)
	}
	err = l.Up(context.Background())
	if err == nil || !strings.Contains(err.Error(), "start c: no luck") {
		t.Fatalf("Up: %v", err)
	}
	if got := strings.Join(log, ","); got != "start a,start b,stop b,stop a" {
		t.Errorf("lifecycle %s", got)
	}
}

// Stand-ins serve TLS with certificates from the lab CA; clients trusting CAFile verify them.
func TestLabCA(t *testing.T) {
	dir := t.TempDir()
	l := upLab(t, dir, Options{})
	cert, err := l.CA.Issue([]netip.Addr{l.IP(60)})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", net.JoinHostPort(l.IP(60).String(), "0"), &tls.Config{Certificates: []tls.Certificate{cert}})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.(*tls.Conn).Handshake()
			c.Close()
		}
	}()
	pemBytes, err := os.ReadFile(filepath.Join(dir, CAFile))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pemBytes) {
		t.Fatal("CA file holds no certificate")
	}
	c, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{RootCAs: pool})
	if err != nil {
		t.Fatalf("TLS with the lab CA: %v", err)
	}
	c.Close()
	// An untrusting client refuses it: the check above verified something.
	if c, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{}); err == nil {
		c.Close()
		t.Fatal("a client without the lab CA accepted the certificate")
	}
	// The CA survives a restart of the same lab dir.
	if err := l.Down(context.Background()); err != nil {
		t.Fatal(err)
	}
	l2 := upLab(t, dir, Options{})
	if !bytes.Equal(l2.CA.PEM(), pemBytes) {
		t.Error("the lab CA changed between starts")
	}
	if fi, err := os.Stat(filepath.Join(dir, caKeyFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("CA key: %v, mode %v", err, fi.Mode())
	}
}
