package gather_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/gather"
	"github.com/bootstrap-dev/bootstrap/internal/gather/sshtest"
)

func dialer(t *testing.T, s *sshtest.Server) *gather.Dialer {
	signer, err := gather.LoadSigner(s.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	return &gather.Dialer{User: s.User, Signer: signer, Keys: gather.NewHostKeys(filepath.Join(t.TempDir(), "known_hosts"))}
}

func TestHostKeyRecordedOnFirstContactThenVerified(t *testing.T) {
	s := sshtest.Start(t)
	d := dialer(t, s)
	ctx := context.Background()
	for i := 0; i < 2; i++ {
		c, err := d.Dial(ctx, s.Addr)
		if err != nil {
			t.Fatalf("dial %d: %v", i, err)
		}
		var out bytes.Buffer
		if err := c.Run(ctx, "echo hello", &out); err != nil || out.String() != "hello\n" {
			t.Fatalf("run: %q %v", out.String(), err)
		}
		c.Close()
	}
	kh, err := os.ReadFile(d.Keys.Path())
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(kh), "\n"); n != 1 || !strings.HasPrefix(string(kh), "[127.0.0.1]:") {
		t.Fatalf("known_hosts should hold one line for the host, got:\n%s", kh)
	}
	if st, _ := os.Stat(d.Keys.Path()); st.Mode().Perm() != 0o600 {
		t.Fatalf("known_hosts mode %v", st.Mode().Perm())
	}

	s.Restart(t) // same address, new host key
	_, err = d.Dial(ctx, s.Addr)
	var hk *gather.HostKeyChangedError
	if !errors.As(err, &hk) || !strings.Contains(err.Error(), "delete that line") {
		t.Fatalf("a changed host key must be refused, got %v", err)
	}
	after, _ := os.ReadFile(d.Keys.Path())
	if !bytes.Equal(kh, after) {
		t.Fatal("a refused key must not be recorded")
	}
}

func TestRemoteCommandFailureCarriesStatusAndStderr(t *testing.T) {
	s := sshtest.Start(t)
	c, err := dialer(t, s).Dial(context.Background(), s.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	err = c.Run(context.Background(), "echo nope >&2; exit 3", io.Discard)
	var ee *gather.ExitError
	if !errors.As(err, &ee) || ee.Status != 3 || strings.TrimSpace(ee.Stderr) != "nope" {
		t.Fatalf("got %v", err)
	}
}

func TestModuleLoaded(t *testing.T) {
	s := sshtest.Start(t)
	// This sandbox has no /proc/modules, so lsmod is a stand-in printing lsmod's format from a file.
	mods := filepath.Join(t.TempDir(), "modules")
	script := "#!/bin/sh\necho 'Module                  Size  Used by'\ncat " + mods + "\n"
	if err := os.WriteFile(filepath.Join(s.BinDir, "lsmod"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	d := dialer(t, s)
	for _, tc := range []struct {
		modules string
		want    bool
	}{
		{"ice                  1056768  0\nirdma_core 1 0\n", false},
		{"ice                  1056768  1 irdma\nirdma                 552960  0\n", true},
	} {
		if err := os.WriteFile(mods, []byte(tc.modules), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := d.ModuleLoaded(context.Background(), "worker-0", s.Addr, "irdma")
		if err != nil || got != tc.want {
			t.Fatalf("modules %q: loaded=%v err=%v, want %v", tc.modules, got, err, tc.want)
		}
	}
}

func TestGatherWritesTarballWithIndexAndListsFailures(t *testing.T) {
	s := sshtest.Start(t)
	d := dialer(t, s)
	dir := t.TempDir()
	journal := filepath.Join(dir, "journal.jsonl")
	if err := os.WriteFile(journal, []byte(`{"kind":"stage-started","stage":"install"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmds := append([]gather.Command{{File: "uname.txt", Cmd: "echo node-says-hi"}}, gather.DefaultCommands()...)
	sources := gather.NodeSources(d, []gather.Node{{Name: "master-0", Address: s.Addr}, {Name: "worker-9", Address: "127.0.0.1:1"}}, cmds)
	sources = append(sources, gather.File{Path: journal, As: "bootstrap/journal.jsonl"}, gather.File{Path: filepath.Join(dir, "absent"), As: "bootstrap/absent"})
	out := filepath.Join(dir, "gather.tar.gz")
	var seen int
	idx, err := gather.Gather(context.Background(), out, sources, gather.Options{Progress: func(gather.Entry) { seen++ }})
	gather.Close(sources)
	if err != nil {
		t.Fatal(err)
	}
	if seen != len(sources) || len(idx.Entries) != len(sources) {
		t.Fatalf("entries %d, progress %d, sources %d", len(idx.Entries), seen, len(sources))
	}
	byName := map[string]gather.Entry{}
	for _, e := range idx.Entries {
		byName[e.Name] = e
	}
	if e := byName["nodes/master-0/uname.txt"]; e.Error != "" || e.Bytes != int64(len("node-says-hi\n")) {
		t.Fatalf("uname entry: %+v", e)
	}
	if e := byName["nodes/master-0/agent-gather.tar.xz"]; !strings.Contains(e.Error, "agent-gather is not present") {
		t.Fatalf("agent-gather should be listed as absent: %+v", e)
	}
	for _, c := range cmds {
		if e := byName["nodes/worker-9/"+c.File]; !strings.Contains(e.Error, "connection refused") {
			t.Fatalf("unreachable node entry %s: %+v", c.File, e)
		}
	}
	if e := byName["bootstrap/absent"]; e.Error == "" {
		t.Fatal("a missing file must be listed as failed")
	}
	if idx.Failed < len(cmds)+2 {
		t.Fatalf("failed count %d", idx.Failed)
	}

	files := readTar(t, out)
	var back gather.Index
	if err := json.Unmarshal(files["index.json"], &back); err != nil || len(back.Entries) != len(sources) {
		t.Fatalf("index.json: %v", err)
	}
	if string(files["nodes/master-0/uname.txt"]) != "node-says-hi\n" || !strings.Contains(string(files["bootstrap/journal.jsonl"]), "stage-started") {
		t.Fatalf("tarball content wrong: %q", files["nodes/master-0/uname.txt"])
	}
	if !strings.Contains(string(files["index.txt"]), "FAILED") {
		t.Fatalf("index.txt:\n%s", files["index.txt"])
	}
	if st, _ := os.Stat(out); st.Mode().Perm() != 0o600 {
		t.Fatalf("tarball mode %v (it holds logs: owner only)", st.Mode().Perm())
	}
}

func readTar(t *testing.T, path string) map[string][]byte {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	out := map[string][]byte{}
	first := ""
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if first == "" {
			first = h.Name
		}
		out[h.Name], _ = io.ReadAll(tr)
	}
	if first != "index.json" {
		t.Fatalf("index.json must come first, got %s", first)
	}
	return out
}
