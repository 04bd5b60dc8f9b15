package stages

import (
	"context"
	"encoding/json"
	"github.com/bootstrap-dev/bootstrap/internal/isoserver"
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

// TestISOReadsAttributedByToken: each node's URL of the shared ISO served here carries its own
// token; the ISO server names the node from it, so a read through NAT (from an address that is
// no node's BMC) counts for that node only, is logged with its name, and a token of another work
// dir (another site's key) or a guessed one serves nothing.
func TestISOReadsAttributedByToken(t *testing.T) {
	dir := t.TempDir()
	iso := filepath.Join(dir, "agent.x86_64.iso")
	if err := os.WriteFile(iso, []byte(strings.Repeat("agent-iso-bytes/", 4096)), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	work := filepath.Join(dir, ".bootstrap")
	out, _ := json.Marshal(map[string]any{"build": map[string]any{"iso": iso}, "url": "http://" + addr + "/iso/agent.x86_64.iso"})
	s := &site.Site{ISO: site.ISO{ServeAddress: addr}, Nodes: []site.Node{
		{Name: "m0", BMC: site.BMC{Address: "https://10.0.0.10"}}, {Name: "m1", BMC: site.BMC{Address: "https://10.0.0.11"}}}}
	env := &pipeline.Env{Site: s, WorkDir: work, Outputs: map[string]json.RawMessage{NameISO: out}}
	urlFor, err := isoURLs(env)
	if err != nil {
		t.Fatal(err)
	}
	u0, u1 := urlFor("m0"), urlFor("m1")
	if u0 == u1 || !strings.HasPrefix(u0, "http://"+addr+"/n/") || !strings.HasSuffix(u0, "/agent.x86_64.iso") {
		t.Fatalf("node URLs %q, %q; want /n/<token>/agent.x86_64.iso, one per node", u0, u1)
	}
	if again, _ := isoURLs(env); again("m0") != u0 {
		t.Fatal("the token changed between calls: the key must persist in the work dir")
	}
	// A work dir that booted before tokens existed (boot output, no key) keeps its plain URLs.
	old := &pipeline.Env{Site: s, WorkDir: t.TempDir(), Outputs: map[string]json.RawMessage{NameISO: out, NameBoot: json.RawMessage(`{"nodes":[]}`)}}
	if plain, err := isoURLs(old); err != nil || plain("m0") != "http://"+addr+"/iso/agent.x86_64.iso" || isoserver.HasTokenKey(old.WorkDir) {
		t.Errorf("a work dir booted without tokens: %v, m0's URL changed", err)
	}
	other, _ := isoserver.TokenKey(t.TempDir())
	foreign := isoserver.TokenURL("http://"+addr+"/iso/agent.x86_64.iso", other, "m0")
	if foreign == u0 {
		t.Fatal("another work dir's key gives the same token")
	}

	srv := &isoserver.Server{}
	defer srv.Close()
	if err := ServeISO(srv)(context.Background(), env); err != nil {
		t.Fatal(err)
	}
	since := time.Now()
	get := func(u string) int {
		req, _ := http.NewRequest(http.MethodGet, u, nil)
		req.Header.Set("Range", "bytes=0-2047")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := get(foreign); code != http.StatusNotFound {
		t.Errorf("another site's token: %d, want 404", code)
	}
	if code := get(u0); code != http.StatusPartialContent {
		t.Fatalf("m0's URL: %d", code)
	}
	// The read came from 127.0.0.1, no node's BMC address (as through NAT): the token names m0.
	// The server records a fetch once its handler returns, which may follow the client's read.
	deadline := time.Now().Add(5 * time.Second)
	for srv.Evidence(context.Background(), "m0", u0, since) != nil && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if err := srv.Evidence(context.Background(), "m0", u0, since); err != nil {
		t.Errorf("m0's read through its token: %v", err)
	}
	if err := srv.Evidence(context.Background(), "m1", u1, since); err == nil {
		t.Error("m0's read counted for m1")
	}
	log, _ := os.ReadFile(filepath.Join(work, isoserver.ReadLog))
	if !strings.Contains(string(log), `"node":"m0"`) {
		t.Errorf("read log does not name m0:\n%s", log)
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
