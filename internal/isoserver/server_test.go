package isoserver

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/agentiso"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func TestISOServerServesAndWitnesses(t *testing.T) {
	dir := t.TempDir()
	iso := filepath.Join(dir, "agent.x86_64.iso")
	content := strings.Repeat("agent-iso-bytes/", 4096)
	if err := os.WriteFile(iso, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	env := Config{Site: &site.Site{ISO: site.ISO{ServeAddress: addr}}, WorkDir: dir}
	srv := &Server{}
	if err := srv.Ensure(context.Background(), env); !errors.Is(err, ErrNoISO) {
		t.Fatalf("Ensure without a built ISO: %v", err)
	}

	env.ISO, env.URL = iso, "http://"+addr+"/iso/agent.x86_64.iso"
	ctx, cancel := context.WithCancel(context.Background())
	if err := srv.Ensure(ctx, env); err != nil {
		t.Fatal(err)
	}
	cancel() // the stage ends; the server must keep serving
	if err := srv.Ensure(context.Background(), env); err != nil {
		t.Fatalf("second Ensure: %v", err)
	}
	since := time.Now()
	var path string
	for _, p := range []string{"/iso/agent.x86_64.iso", "/agent.x86_64.iso"} {
		if resp, err := http.Head("http://" + addr + p); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				path = p
			}
		}
	}
	if path == "" {
		t.Fatal("the ISO is not served at a known path")
	}
	url := "http://" + addr + path
	if err := srv.Evidence(context.Background(), "cp-0", url, since); err == nil {
		t.Fatal("evidence before any GET")
	}
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Range", "bytes=16-31")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusPartialContent || string(b) != content[16:32] {
		t.Fatalf("range read: %d %q", resp.StatusCode, b)
	}
	if err := srv.Evidence(context.Background(), "cp-0", url, since); err != nil {
		t.Fatalf("evidence after a GET: %v", err)
	}
	if err := srv.Evidence(context.Background(), "cp-0", url, time.Now().Add(time.Minute)); err == nil {
		t.Fatal("a fetch before since counted as evidence")
	}

	// The session ends (Close): the server stops; a new process's server (a resumed run) knows
	// from the read log that cp-0 read its ISO after since, and nothing read it later.
	srv.Close()
	if resp, err := http.Head(url); err == nil {
		resp.Body.Close()
		t.Fatal("the server still answers after Close")
	}
	next := &Server{}
	defer next.Close()
	if err := next.Ensure(context.Background(), env); err != nil {
		t.Fatal(err)
	}
	if err := next.Evidence(context.Background(), "cp-0", url, since); err != nil {
		t.Errorf("the resumed run's server does not know the earlier read: %v", err)
	}
	if err := next.Evidence(context.Background(), "cp-0", url, time.Now()); err == nil {
		t.Error("evidence without a read after since")
	}
}

// TestEvidenceBySource: with a shared ISO, a read counts for a node only when it came from the
// node's BMC address, once reads are seen coming from BMC addresses; before that, any read counts.
func TestEvidenceBySource(t *testing.T) {
	since := time.Now()
	read := func(remote string) agentiso.Fetch {
		return agentiso.Fetch{Time: since.Add(time.Second), Remote: remote, Method: "GET", Path: "/agent.x86_64.iso", Status: 206, Bytes: 2048}
	}
	s := &Server{bmcs: bmcAddresses([]site.Node{
		{Name: "m0", BMC: site.BMC{Address: "https://10.0.0.10"}},
		{Name: "m1", BMC: site.BMC{Address: "10.0.0.11:8443"}},
	})}
	url := "http://10.0.0.5:8080/agent.x86_64.iso"
	s.fetches = []agentiso.Fetch{read("192.0.2.7:4242")} // a reader that is no BMC
	if err := s.Evidence(context.Background(), "m1", url, since); err != nil {
		t.Errorf("no read from any BMC address yet: any reader counts: %v", err)
	}
	s.fetches = append(s.fetches, read("10.0.0.10:51234"))
	if err := s.Evidence(context.Background(), "m0", url, since); err != nil {
		t.Errorf("m0 read from its BMC address: %v", err)
	}
	if err := s.Evidence(context.Background(), "m1", url, since); err == nil {
		t.Error("m0's read (and a stranger's) counted for m1")
	}
	s.fetches = append(s.fetches, read("10.0.0.11:40000"))
	if err := s.Evidence(context.Background(), "m1", url, since); err != nil {
		t.Errorf("m1 read from its BMC address: %v", err)
	}
}
