package main

import (
	"bytes"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestGatherCommandWritesTarballAndListsFailures(t *testing.T) {
	dir := t.TempDir()
	const canary = "gather-canary-7f3a"
	file := writeLabSite(t, dir, canary)
	// A port nothing listens on: every node's sources fail fast and are listed.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	out := filepath.Join(dir, "g.tar.gz")
	for _, format := range []string{"text", "json"} {
		var stdout, stderr bytes.Buffer
		root := NewRootCmd(&stdout, &stderr)
		root.SetArgs([]string{"gather", "-f", file, "-o", format, "--no-bmc", "--ssh-port", strconv.Itoa(port), "--out", out})
		// Every node source failed: the tarball is written and the exit code says "partial".
		if err := root.Execute(); exitCode(err) != exitPartial {
			t.Fatalf("%s: %v (exit %d, want %d)\n%s", format, err, exitCode(err), exitPartial, stderr.String())
		}
		if strings.Contains(stdout.String()+stderr.String(), canary) {
			t.Fatal("a secret was printed")
		}
		if _, err := os.Stat(out); err != nil {
			t.Fatal(err)
		}
		switch format {
		case "text":
			if !strings.Contains(stdout.String(), "failed (see index.txt inside)") || !strings.Contains(stderr.String(), "nodes/cp-0/kubelet.log") {
				t.Fatalf("text output:\n%s\n%s", stdout.String(), stderr.String())
			}
		case "json":
			var doc struct {
				Tarball string
				Index   struct {
					Entries []struct{ Name, Error string }
					Failed  int
				}
			}
			kinds, _, data := jsonLinesOf(t, stdout.String())
			if err := json.Unmarshal(data, &doc); err != nil || doc.Tarball != out || doc.Index.Failed == 0 ||
				len(kinds) != len(doc.Index.Entries)+1 || kinds[0] != "source" {
				t.Fatalf("json output %q: %v", stdout.String(), err)
			}
		}
	}
}
