package stages

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
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
	out, _ := json.Marshal(ISOOutput{Build: nil})
	env := &pipeline.Env{Site: &site.Site{ISO: site.ISO{ServeAddress: addr}}, WorkDir: dir,
		Outputs: map[string]json.RawMessage{"iso": out}}
	srv := &ISOServer{}
	if err := srv.Ensure(context.Background(), env); err == nil || !strings.Contains(err.Error(), "no agent ISO") {
		t.Fatalf("Ensure without a built ISO: %v", err)
	}

	out, _ = json.Marshal(map[string]any{"build": map[string]any{"iso": iso}, "url": "http://" + addr + "/iso/agent.x86_64.iso"})
	env.Outputs["iso"] = out
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
	next := &ISOServer{}
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
