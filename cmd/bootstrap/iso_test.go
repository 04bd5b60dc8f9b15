package main

import (
	"bytes"
	"context"
	"encoding/base64"
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
	"github.com/bootstrap-dev/bootstrap/internal/finding"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// labSite writes the embedded lab profile with its files into a temp dir (so the default work
// dir, .bootstrap beside the profile, lands there), edited by the replacements (old, new pairs).
func labSite(t *testing.T, canary string, edits ...string) string {
	t.Helper()
	p := writeLabSite(t, t.TempDir(), canary)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(edits); i += 2 {
		if !bytes.Contains(b, []byte(edits[i])) {
			t.Fatalf("lab profile lacks %q", edits[i])
		}
		b = bytes.Replace(b, []byte(edits[i]), []byte(edits[i+1]), 1)
	}
	write(t, p, b, 0o644)
	return p
}

func TestISOManifestsOnlyCmd(t *testing.T) {
	const canary = "canary-pull-secret-3141"
	p := labSite(t, canary)
	var out, errb bytes.Buffer
	g := &globals{file: p, output: "text", stdout: &out, stderr: &errb}
	cmd := newISOCmd(g)
	cmd.SetArgs([]string{"--manifests-only"})
	if err := cmd.Execute(); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	for _, f := range []string{"install-config.yaml", "agent-config.yaml", "openshift/99-operatorhub-disable-default-sources.yaml"} {
		if !strings.Contains(out.String(), f) {
			t.Errorf("output lacks %s:\n%s", f, out.String())
		}
		if _, err := os.Stat(filepath.Join(filepath.Dir(p), ".bootstrap", f)); err != nil {
			t.Error(err)
		}
	}
	ic, _ := os.ReadFile(filepath.Join(filepath.Dir(p), ".bootstrap", "install-config.yaml"))
	if !bytes.Contains(ic, []byte(base64.StdEncoding.EncodeToString([]byte("lab:"+canary)))) {
		t.Error("install-config lacks the registry's pull secret")
	}
	if strings.Contains(out.String()+errb.String(), canary) || strings.Contains(out.String()+errb.String(), base64.StdEncoding.EncodeToString([]byte("lab:"+canary))) {
		t.Error("pull secret printed")
	}
}

// The command loads the profile as every command does: an invalid one exits 3, naming file,
// line and field.
func TestISOCmdInvalidExit3(t *testing.T) {
	p := labSite(t, "not-a-canary", "rootDevice: /dev/disk/by-path/pci-0000:04:00.0", "rootDevice: /dev/disk/by-id/wwn-0x5000c500a0b1c2d3")
	var out, errb bytes.Buffer
	g := &globals{file: p, output: "text", stdout: &out, stderr: &errb}
	cmd := newISOCmd(g)
	cmd.SetArgs([]string{"--manifests-only"})
	err := cmd.Execute()
	if exitCode(err) != exitInvalid || !regexp.MustCompile(`site.yaml:\d+:\d+: error: nodes\[0\].rootDevice: .*by-id`).MatchString(errb.String()) {
		t.Fatalf("exit %d, stderr:\n%s", exitCode(err), errb.String())
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(p), ".bootstrap", "install-config.yaml")); err == nil {
		t.Error("files written for an invalid profile")
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

// serve --listen replaces iso.serveAddress, and the URLs it announces name the bound address
// (iso.baseURL defaults to serveAddress's).
func TestServeCmd(t *testing.T) {
	p := labSite(t, "not-a-canary", "serveAddress: 127.0.0.1:8080", "serveAddress: 127.0.0.1:8080\n  perNode: true",
		"rootDevice: /dev/disk/by-path/pci-0000:04:00.0\n", "rootDevice: /dev/disk/by-path/pci-0000:04:00.0\n    iso: {kernelArgs: [\"console=ttyS1,115200n8\"]}\n")
	iso := filepath.Join(t.TempDir(), "agent.x86_64.iso")
	if err := (agentisotest.LiveISO{}).Build(iso); err != nil {
		t.Fatal(err)
	}
	prof := p
	var out, errb syncBuffer
	g := &globals{file: prof, output: "text", stdout: &out, stderr: &errb}
	cmd := newServeCmd(g)
	cmd.SetArgs([]string{"--iso", iso, "--listen", "127.0.0.1:0"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(ctx) }()
	re := regexp.MustCompile(`serving cp-0\s+http://127.0.0.1:\d+/iso/nodes/cp-0.iso`)
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
	if !strings.Contains(out.String(), "/iso/nodes/cp-0.iso node=cp-0") {
		t.Errorf("no fetch log line: %q", out.String())
	}
}

// The iso stage's own refusals are printed as validate prints a problem: file:line:col, field,
// message (exit 3 is TestISOCmdInvalidExit3's).
func TestISOProblemsShape(t *testing.T) {
	p := labSite(t, "not-a-canary")
	s, err := site.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	ps := isoProblems(s, finding.List{{Status: finding.Fail, Node: "cp-0", Path: "nodes[0].rootDevice", Message: "no such disk"}})
	if err := ps.Format(&b); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`site.yaml:\d+:\d+: error: nodes\[0\]\.rootDevice: node cp-0: no such disk\n`).MatchString(b.String()) || ps[0].Line == 0 {
		t.Errorf("got:\n%s", b.String())
	}
}
