package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/agentiso/agentisotest"
)

// testProfileDir copies the agentiso test profiles and their files into a temp dir, so the
// default work dir (.bootstrap beside the profile) lands there.
func testProfileDir(t *testing.T) string {
	t.Helper()
	dst := t.TempDir()
	src := filepath.Join("..", "..", "internal", "agentiso", "testdata")
	filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, _ := os.ReadFile(p)
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	return dst
}

func TestISOManifestsOnlyCmd(t *testing.T) {
	dir := testProfileDir(t)
	var out, errb bytes.Buffer
	g := &globals{file: filepath.Join(dir, "profiles", "lab.yaml"), output: "text", stdout: &out, stderr: &errb}
	cmd := newISOCmd(g)
	cmd.SetArgs([]string{"--manifests-only"})
	if err := cmd.Execute(); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	for _, f := range []string{"install-config.yaml", "agent-config.yaml", "openshift/99-operatorhub-disable-default-sources.yaml"} {
		if !strings.Contains(out.String(), f) {
			t.Errorf("output lacks %s:\n%s", f, out.String())
		}
		if _, err := os.Stat(filepath.Join(dir, "profiles", ".bootstrap", f)); err != nil {
			t.Error(err)
		}
	}
	if strings.Contains(out.String()+errb.String(), "dGVzdDp0ZXN0") {
		t.Error("pull secret printed")
	}
}

func TestISOCmdInvalidExit3(t *testing.T) {
	dir := testProfileDir(t)
	p := filepath.Join(dir, "profiles", "lab.yaml")
	b, _ := os.ReadFile(p)
	os.WriteFile(p, bytes.Replace(b, []byte("rootDevice: /dev/disk/by-path/pci-0000:04:00.0"), []byte("rootDevice: /dev/sda"), 1), 0o644)
	var out, errb bytes.Buffer
	g := &globals{file: p, output: "text", stdout: &out, stderr: &errb}
	cmd := newISOCmd(g)
	cmd.SetArgs([]string{"--manifests-only"})
	err := cmd.Execute()
	if exitCode(err) != exitInvalid || !strings.Contains(errb.String(), "nodes[0].rootDevice (node master-0)") {
		t.Fatalf("exit %d, stderr:\n%s", exitCode(err), errb.String())
	}
}

// syncBuffer is a goroutine-safe buffer.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

func TestServeCmd(t *testing.T) {
	dir := testProfileDir(t)
	iso := filepath.Join(dir, "agent.x86_64.iso")
	if err := (agentisotest.LiveISO{}).Build(iso); err != nil {
		t.Fatal(err)
	}
	prof := filepath.Join(dir, "profiles", "dell-xe7740-h200.yaml")
	b, _ := os.ReadFile(prof)
	os.WriteFile(prof, bytes.Replace(b, []byte(`serveAddress: "10.40.10.2:8080"`), []byte(`serveAddress: "127.0.0.1:0"`), 1), 0o644)
	var out, errb syncBuffer
	g := &globals{file: prof, output: "text", stdout: &out, stderr: &errb}
	cmd := newServeCmd(g)
	cmd.SetArgs([]string{"--iso", iso})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(ctx) }()
	re := regexp.MustCompile(`serving xe7740-1\s+http://127.0.0.1:\d+/iso/nodes/xe7740-1.iso`)
	var url string
	for i := 0; i < 100 && url == ""; i++ {
		time.Sleep(50 * time.Millisecond)
		if m := re.FindString(errb.String()); m != "" {
			url = strings.Fields(m)[2]
		}
	}
	if url == "" {
		cancel()
		t.Fatalf("no node URL announced: %s (%v)", errb.String(), <-done)
	}
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	st, _ := os.Stat(iso)
	if resp.StatusCode != 200 || n != st.Size() {
		t.Errorf("GET %s: %d, %d bytes", url, resp.StatusCode, n)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "/iso/nodes/xe7740-1.iso node=xe7740-1") {
		t.Errorf("no fetch log line: %q", out.String())
	}
}
