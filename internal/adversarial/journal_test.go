package adversarial

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
)

// journalOf writes n entries through the journal itself and returns its path.
func journalOf(t *testing.T, n int) string {
	t.Helper()
	path := pipeline.JournalPath(t.TempDir())
	j, _, err := pipeline.OpenJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if _, err := j.Append(pipeline.Entry{Kind: pipeline.EntryStepDone, Stage: "boot", Step: "node:cp-0/power-on"}); err != nil {
			t.Fatal(err)
		}
	}
	j.Close()
	return path
}

// snapshotDir is every file's name and content in dir.
func snapshotDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		out[e.Name()] = string(b)
	}
	return out
}

// TestWitnessDeletedLaundersNothing: a journal rolled back by hand and its witness deleted used to
// report "end witnessed"; now status says unwitnessed, a run is refused (an integrity failure,
// exit 6 in cmd) and the refused run changes nothing in the work dir, torn tail included.
func TestWitnessDeletedLaundersNothing(t *testing.T) {
	path := journalOf(t, 4)
	data, _ := os.ReadFile(path)
	lines := bytes.SplitAfter(data, []byte("\n"))
	rolled := append(bytes.Join(lines[:2], nil), []byte(`{"seq":3,"ki`)...) // rolled back, torn tail
	if err := os.WriteFile(path, rolled, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(pipeline.HeadPath(path)); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(path)
	before := snapshotDir(t, dir)
	st, err := (&pipeline.Runner{WorkDir: dir}).Status()
	if err != nil || st.Tail != pipeline.TailUnwitnessed {
		t.Fatalf("status: tail %q (%v)", st.Tail, err)
	}
	var te *pipeline.TailError
	if _, _, err := pipeline.OpenJournal(path); !errors.As(err, &te) || te.Kind != pipeline.TailUnwitnessed {
		t.Fatalf("open: %v", err)
	}
	if after := snapshotDir(t, dir); len(after) != len(before) || after[pipeline.JournalFile] != before[pipeline.JournalFile] {
		t.Errorf("a refused open changed the work dir: %v -> %v", keys(before), keys(after))
	}
}

// TestOlderWitnessIsTampering: a witness older than the journal (an old journal.head restored over
// the current one, the journal extended behind it) is refused too.
func TestOlderWitnessIsTampering(t *testing.T) {
	path := journalOf(t, 2)
	old, _ := os.ReadFile(pipeline.HeadPath(path))
	j, _, err := pipeline.OpenJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	j.Append(pipeline.Entry{Kind: pipeline.EntryStepDone, Stage: "boot", Step: "node:cp-1/power-on"})
	j.Close()
	os.WriteFile(pipeline.HeadPath(path), old, 0o600)
	var te *pipeline.TailError
	if _, err := pipeline.VerifyTail(path); !errors.As(err, &te) {
		t.Fatalf("older witness: %v", err)
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestJournalEndlessLine: a journal line without end (a link-free journal.jsonl of 65 MiB without a
// newline, sparse) is refused with the cap named instead of read into memory.
func TestJournalEndlessLine(t *testing.T) {
	path := journalOf(t, 1)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"seq":2,"kind":"x","data":"`)
	f.Close()
	os.Truncate(path, 65<<20)
	_, _, err = pipeline.ReadJournal(path)
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte("64 MiB")) {
		t.Fatalf("endless line: %v", err)
	}
}
