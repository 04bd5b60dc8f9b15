package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
)

// TestJournalRolledBack: the journal loses its last entries (a restored copy, a hand edit). status
// and report say it was truncated and exit 6, in text and JSON; run refuses to continue, naming
// the flag and what it does; with the flag it continues and journals that it did.
func TestJournalRolledBack(t *testing.T) {
	dir := t.TempDir()
	site := writeLabSite(t, dir, "canary-rolled-back")
	if code, _, errs := run(t, "run", "-f", site, "--until", "preflight"); code != exitPreflight {
		t.Fatalf("first run: exit %d\n%s", code, errs)
	}
	journal := pipeline.JournalPath(filepath.Join(dir, ".bootstrap"))
	data, _ := os.ReadFile(journal)
	jl := bytes.SplitAfter(data, []byte("\n"))
	if err := os.WriteFile(journal, bytes.Join(jl[:len(jl)-3], nil), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, _ := run(t, "status", "-f", site)
	if code != exitIntegrity || !strings.Contains(out, "JOURNAL TRUNCATED") || !strings.Contains(out, "the last 2 entries were removed") {
		t.Errorf("status: exit %d\n%s", code, out)
	}
	code, out, _ = run(t, "status", "-f", site, "-o", "json")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var res struct {
		ExitCode int             `json:"exitCode"`
		Error    string          `json:"error"`
		Data     pipeline.Status `json:"data"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &res); err != nil || code != exitIntegrity || res.ExitCode != exitIntegrity ||
		res.Data.Tail != pipeline.TailTruncated || !strings.Contains(res.Error, "truncated") {
		t.Errorf("status -o json: exit %d, result %+v, %v\n%s", code, res, err, out)
	}
	for _, format := range []string{"md", "json"} {
		if code, out, _ := run(t, "report", "-f", site, "--format", format); code != exitIntegrity || !strings.Contains(out, "truncated") {
			t.Errorf("report --format %s: exit %d", format, code)
		}
	}
	before, _ := os.ReadFile(journal)
	code, _, errs := run(t, "run", "-f", site, "--until", "preflight")
	if code != exitIntegrity || !strings.Contains(errs, "--accept-journal-tail") || !strings.Contains(errs, "runs again") {
		t.Errorf("run on a rolled-back journal: exit %d\n%s", code, errs)
	}
	if after, _ := os.ReadFile(journal); !bytes.Equal(before, after) {
		t.Error("a refused run wrote to the journal")
	}
	if code, _, errs := run(t, "run", "-f", site, "--until", "preflight", "--accept-journal-tail"); code != exitPreflight {
		t.Fatalf("run --accept-journal-tail: exit %d\n%s", code, errs)
	}
	code, out, _ = run(t, "status", "-f", site)
	if code != exitOK || !strings.Contains(out, "witnessed") {
		t.Errorf("status after accepting: exit %d\n%s", code, out)
	}
	if data, _ := os.ReadFile(journal); !strings.Contains(string(data), "continued from a journal whose end does not match") {
		t.Error("accepting the rolled-back journal was not journaled")
	}
}
