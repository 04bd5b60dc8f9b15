package pipeline_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
)

// writeJournal appends n step entries through the real writer and returns the file's lines.
func writeJournal(t *testing.T, n int) (string, [][]byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "w", pipeline.JournalFile)
	j, _, err := pipeline.OpenJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if _, err := j.Append(pipeline.Entry{Kind: pipeline.EntryStepDone, Stage: "mirror",
			Step: "image-" + string(rune('a'+i)), Data: []byte(`{"digest":"sha256:00"}`)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	return path, bytes.SplitAfter(data, []byte("\n"))
}

func TestVerifyChain(t *testing.T) {
	tests := []struct {
		name    string
		edit    func(lines [][]byte) [][]byte
		wantSeq int64 // 0: chain verifies
		wantIn  string
	}{
		{name: "untouched", edit: func(l [][]byte) [][]byte { return l }},
		{name: "edited entry", wantSeq: 2, wantIn: "edited", edit: func(l [][]byte) [][]byte {
			l[1] = bytes.Replace(l[1], []byte("image-b"), []byte("image-x"), 1)
			return l
		}},
		{name: "removed entry", wantSeq: 3, wantIn: "removed", edit: func(l [][]byte) [][]byte {
			return append(l[:2:2], l[3:]...)
		}},
		{name: "removed first entry", wantSeq: 1, wantIn: "removed", edit: func(l [][]byte) [][]byte { return l[1:] }},
		{name: "garbage in the middle", wantSeq: 3, wantIn: "invalid JSON", edit: func(l [][]byte) [][]byte {
			l[2] = []byte("{not json\n")
			return l
		}},
		{name: "torn last line is no error", edit: func(l [][]byte) [][]byte {
			last := len(l) - 2 // SplitAfter leaves an empty final element
			l[last] = l[last][:len(l[last])/2]
			return l
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path, lines := writeJournal(t, 5)
			if err := os.WriteFile(path, bytes.Join(tc.edit(lines), nil), 0o600); err != nil {
				t.Fatal(err)
			}
			err := pipeline.VerifyChain(path)
			if tc.wantSeq == 0 {
				if err != nil {
					t.Fatalf("chain: %v", err)
				}
				return
			}
			var ce *pipeline.ChainError
			if !errors.As(err, &ce) || ce.Seq != tc.wantSeq || !strings.Contains(err.Error(), tc.wantIn) {
				t.Fatalf("got %v (%+v), want ChainError naming seq %d with %q", err, ce, tc.wantSeq, tc.wantIn)
			}
			if _, _, err := pipeline.OpenJournal(path); !errors.As(err, &ce) {
				t.Errorf("OpenJournal accepted a broken chain: %v", err)
			}
		})
	}
}

// TestTornTail: a torn last line is reported, truncated before the next append, and the chain
// continues from the last good line.
func TestTornTail(t *testing.T) {
	path, _ := writeJournal(t, 3)
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"seq":4,"time":"2026-`)
	f.Close()
	entries, warnings, err := pipeline.ReadJournal(path)
	if err != nil || len(entries) != 3 || len(warnings) != 1 || !strings.Contains(warnings[0], "torn") {
		t.Fatalf("read: %d entries, warnings %v, err %v", len(entries), warnings, err)
	}
	j, warnings, err := pipeline.OpenJournal(path)
	if err != nil || len(warnings) != 1 {
		t.Fatalf("open: %v %v", warnings, err)
	}
	e, err := j.Append(pipeline.Entry{Kind: pipeline.EntryWarning, Error: warnings[0]})
	if err != nil || e.Seq != 4 {
		t.Fatalf("append after torn tail: seq %d, %v", e.Seq, err)
	}
	j.Close()
	if err := pipeline.VerifyChain(path); err != nil {
		t.Fatal(err)
	}
	if _, warnings, _ := pipeline.ReadJournal(path); len(warnings) != 0 {
		t.Errorf("torn tail still there: %v", warnings)
	}
}

func TestJournalLimits(t *testing.T) {
	path := filepath.Join(t.TempDir(), pipeline.JournalFile)
	j, _, err := pipeline.OpenJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	big := `"` + strings.Repeat("x", pipeline.MaxEntryBytes) + `"`
	if _, err := j.Append(pipeline.Entry{Kind: pipeline.EntryStepDone, Data: []byte(big)}); err == nil ||
		!strings.Contains(err.Error(), "write large data to a file") {
		t.Errorf("oversized entry: %v", err)
	}
	if _, err := j.Append(pipeline.Entry{Kind: pipeline.EntryStepDone, Data: []byte(`{bad`)}); err == nil {
		t.Error("invalid JSON data accepted")
	}
	if e, err := j.Append(pipeline.Entry{Kind: pipeline.EntryRunStarted}); err != nil || e.Seq != 1 || e.Prev != "" {
		t.Errorf("first good entry after rejected ones: %+v %v", e, err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("journal mode %v, want 0600", fi.Mode().Perm())
	}
}

func TestFold(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	entries := []pipeline.Entry{
		{Seq: 1, Time: at(0), Kind: pipeline.EntryRunStarted, Data: []byte(`{"mode":"run","command":"bootstrap run"}`)},
		{Seq: 2, Time: at(1), Kind: pipeline.EntryStageStarted, Stage: "boot", Attempt: 1, Fingerprint: "sha256:1"},
		{Seq: 3, Time: at(5), Kind: pipeline.EntryStepDone, Stage: "boot", Attempt: 1, Step: pipeline.NodeStep("w1", "insert-media")},
		{Seq: 4, Time: at(6), Kind: pipeline.EntryStepDone, Stage: "boot", Attempt: 1, Step: pipeline.NodeStep("w1", "power-on")},
		{Seq: 5, Time: at(7), Kind: pipeline.EntryStepDone, Stage: "boot", Attempt: 1, Step: pipeline.NodeStep("w2", "insert-media")},
		// killed here; the next run resumes attempt 1
		{Seq: 6, Time: at(100), Kind: pipeline.EntryRunStarted, Data: []byte(`{"mode":"run"}`)},
		{Seq: 7, Time: at(101), Kind: pipeline.EntryStageStarted, Stage: "boot", Attempt: 1, Fingerprint: "sha256:1"},
		{Seq: 8, Time: at(103), Kind: pipeline.EntryStepDone, Stage: "boot", Attempt: 1, Step: pipeline.NodeStep("w2", "power-on")},
		{Seq: 9, Time: at(104), Kind: pipeline.EntryStageFailed, Stage: "boot", Attempt: 1, Error: "w3: 401", Remedy: "check the BMC credentials"},
		{Seq: 10, Time: at(105), Kind: pipeline.EntryRunFinished, Error: "stage boot: w3: 401"},
	}
	st := pipeline.Fold(entries)
	b := st.Stage("boot")
	if b.State != pipeline.StateFailed || b.Runs != 2 || b.Steps != 4 || b.Seconds != 9 || b.Remedy == "" {
		t.Errorf("boot: %+v", b)
	}
	if len(b.Nodes) != 2 || b.Nodes[0].Name != "w1" || b.Nodes[0].Last != "power-on" || b.Nodes[1].Steps != 2 {
		t.Errorf("nodes: %+v", b.Nodes)
	}
	if st.Runs != 2 || st.LastRun == nil || !st.LastRun.Ended || st.LastRun.Seq != 6 {
		t.Errorf("runs: %d %+v", st.Runs, st.LastRun)
	}
	if p := st.Stage("install"); p.State != pipeline.StatePending {
		t.Errorf("unknown stage %+v, want pending", p)
	}
	// Killed without a new run: running until the caller marks it killed.
	st = pipeline.Fold(entries[:5])
	if st.Stage("boot").State != pipeline.StateRunning {
		t.Fatalf("state %s, want running", st.Stage("boot").State)
	}
	st.MarkKilled()
	if b := st.Stage("boot"); b.State != pipeline.StateInterrupted || b.Seconds != 6 {
		t.Errorf("after MarkKilled: %+v", b)
	}
}

// TestJournalSingleWriter: even with the lock file gone, a second writer cannot open the journal.
func TestJournalSingleWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), pipeline.JournalFile)
	j, _, err := pipeline.OpenJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	var le *pipeline.LockedError
	if _, _, err := pipeline.OpenJournal(path); !errors.As(err, &le) || !strings.Contains(err.Error(), "another process") {
		t.Fatalf("second writer: %v, want *LockedError", err)
	}
	j.Close()
	j2, _, err := pipeline.OpenJournal(path)
	if err != nil {
		t.Fatalf("after close: %v", err)
	}
	j2.Close()
}
