package agentiso

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/agentiso/agentisotest"
)

// testImages builds a live ISO, prepares a per-node view and returns the images plus the exact
// bytes each should serve (the node's read from a materialized copy).
func testImages(t *testing.T) (*Prepared, map[string][]byte) {
	iso := buildISO(t, agentisotest.LiveISO{Ignition: []byte(agentIgnition)})
	p, err := Prepare(PrepareOptions{BaseISO: iso, Nodes: map[string]Customization{
		"xe7740-1": {KernelArgs: []string{"console=ttyS1,115200n8"}, Ignition: []byte(`{"ignition":{"version":"3.2.0"}}`)},
		"r660-1":   {},
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	base, _ := os.ReadFile(iso)
	node, _ := os.ReadFile(materialize(t, p.Nodes["xe7740-1"].Content.(*View)))
	if bytes.Equal(base, node) {
		t.Fatal("node view equals the base")
	}
	if _, ok := p.Nodes["r660-1"]; ok || p.ImageFor("r660-1").Path != p.Base.Path {
		t.Fatal("node without customization got its own view")
	}
	return p, map[string][]byte{p.Base.Path: base, p.Nodes["xe7740-1"].Path: node}
}

func TestServerConcurrentRanges(t *testing.T) {
	p, want := testImages(t)
	var mu sync.Mutex
	var fetches []Fetch
	h, err := NewHandler(HandlerOptions{Images: p.Images(), OnFetch: func(f Fetch) { mu.Lock(); fetches = append(fetches, f); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	addr := startServer(t, h, "", "")
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func(seed uint64) {
			defer wg.Done()
			r := mrand.New(mrand.NewPCG(seed, 9))
			for i := 0; i < 20; i++ {
				for path, data := range want {
					lo := r.Int64N(int64(len(data)))
					hi := min(lo+r.Int64N(300<<10), int64(len(data))-1)
					req, _ := http.NewRequest("GET", "http://"+addr+path, nil)
					req.Header.Set("Range", fmt.Sprintf("bytes=%d-%d", lo, hi))
					resp, err := http.DefaultClient.Do(req)
					if err != nil {
						errs <- err
						return
					}
					body, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					if resp.StatusCode != 206 || !bytes.Equal(body, data[lo:hi+1]) ||
						resp.Header.Get("Content-Range") != fmt.Sprintf("bytes %d-%d/%d", lo, hi, len(data)) {
						errs <- fmt.Errorf("%s range %d-%d: status %d, %d bytes, content-range %q", path, lo, hi, resp.StatusCode, len(body), resp.Header.Get("Content-Range"))
						return
					}
				}
			}
		}(uint64(g))
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// whole-file GET
	for path, data := range want {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !bytes.Equal(body, data) || resp.ContentLength != int64(len(data)) {
			t.Errorf("GET %s: %d, %d bytes", path, resp.StatusCode, len(body))
		}
	}
	// OnFetch runs after the response is written: the client can see the last body before the
	// server has logged it, so wait (bounded) for the log to catch up.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		mu.Lock()
		n := len(fetches)
		mu.Unlock()
		if n >= 16*20*2+2 {
			break
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(fetches) != 16*20*2+2 {
		t.Errorf("%d fetches logged, want %d", len(fetches), 16*20*2+2)
	}
	for _, f := range fetches {
		if f.Remote == "" || f.Status == 0 || f.Bytes == 0 || (strings.Contains(f.Path, "nodes") && f.Node != "xe7740-1") {
			t.Fatalf("bad fetch log %+v", f)
		}
	}
}

func TestServerHeadETagErrors(t *testing.T) {
	p, want := testImages(t)
	h, _ := NewHandler(HandlerOptions{Images: p.Images()})
	addr := startServer(t, h, "", "")
	node := p.Nodes["xe7740-1"]
	if node.ETag == p.Base.ETag {
		t.Fatal("node view shares the base ETag")
	}
	do := func(method, path string, hdr ...string) *http.Response {
		req, _ := http.NewRequest(method, "http://"+addr+path, nil)
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	resp := do("HEAD", node.Path)
	if resp.StatusCode != 200 || resp.ContentLength != int64(len(want[node.Path])) || resp.Header.Get("ETag") != node.ETag ||
		resp.Header.Get("Accept-Ranges") != "bytes" {
		t.Errorf("HEAD: %d len %d etag %q headers %v", resp.StatusCode, resp.ContentLength, resp.Header.Get("ETag"), resp.Header)
	}
	if r := do("GET", node.Path, "If-None-Match", node.ETag); r.StatusCode != 304 {
		t.Errorf("If-None-Match: %d", r.StatusCode)
	}
	if r := do("GET", node.Path, "Range", "bytes=0-9", "If-Range", `"stale"`); r.StatusCode != 200 {
		t.Errorf("If-Range with a stale tag: %d, want the whole file", r.StatusCode)
	}
	if r := do("GET", node.Path, "Range", fmt.Sprintf("bytes=%d-", node.Size+10)); r.StatusCode != 416 {
		t.Errorf("unsatisfiable range: %d", r.StatusCode)
	}
	if r := do("GET", "/iso/nodes/nobody.iso"); r.StatusCode != 404 {
		t.Errorf("unknown: %d", r.StatusCode)
	}
	if r := do("PUT", node.Path); r.StatusCode != 405 {
		t.Errorf("PUT: %d", r.StatusCode)
	}
	// a second Prepare of the same inputs gives the same ETag (stable across restarts)
	p2, err := Prepare(PrepareOptions{BaseISO: p.file.Name(), Nodes: map[string]Customization{"xe7740-1": {KernelArgs: []string{"console=ttyS1,115200n8"}, Ignition: []byte(`{"ignition":{"version":"3.2.0"}}`)}}})
	if err != nil {
		t.Fatal(err)
	}
	defer p2.Close()
	if p2.Nodes["xe7740-1"].ETag != node.ETag {
		t.Error("ETag not stable across Prepare calls")
	}
}

func TestURLLength(t *testing.T) {
	img := Image{Path: "/iso/nodes/xe7740-1.iso"}
	if u, err := URL("http://10.40.10.2:8080/", img); err != nil || u != "http://10.40.10.2:8080/iso/nodes/xe7740-1.iso" {
		t.Errorf("URL = %q, %v", u, err)
	}
	// iDRAC9 takes an Image URL of up to 255 characters
	base := "http://10.40.10.2:8080/"
	pad := strings.Repeat("a", 255-len(base)-len(img.Path))
	if u, err := URL(base+pad, img); err != nil || len(u) != 255 {
		t.Errorf("255 characters: %d, %v", len(u), err)
	}
	if _, err := URL(base+pad+"a", img); err == nil || !strings.Contains(err.Error(), "is 256 characters; iDRAC accepts at most 255") {
		t.Errorf("256 characters: %v", err)
	}
	if _, err := URL("ftp://x", img); err == nil {
		t.Error("ftp accepted")
	}
}

func TestServeTLS(t *testing.T) {
	p, want := testImages(t)
	h, _ := NewHandler(HandlerOptions{Images: p.Images()})
	cert, key, pool := selfSigned(t)
	addr := startServer(t, h, cert, key)
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	req, _ := http.NewRequest("GET", "https://"+addr+p.Base.Path, nil)
	req.Header.Set("Range", "bytes=32768-40959")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 206 || !bytes.Equal(body, want[p.Base.Path][32768:40960]) {
		t.Errorf("TLS range: %d %d bytes", resp.StatusCode, len(body))
	}
}

func startServer(t *testing.T, h http.Handler, cert, key string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, ServeOptions{Addr: "127.0.0.1:0", Handler: h, TLSCert: cert, TLSKey: key, Ready: func(a net.Addr) { ready <- a }})
	}()
	var addr net.Addr
	select {
	case addr = <-ready:
	case err := <-done:
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return addr.String()
}

func selfSigned(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "iso"}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kd, _ := x509.MarshalECPrivateKey(k)
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kd}), 0o600)
	c, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(c)
	return certFile, keyFile, pool
}
