package pipeline_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
)

// forged is a valid next entry after lines (seq and prev right), as someone editing the file by
// hand would write it.
func forged(t *testing.T, lines [][]byte, step string) []byte {
	t.Helper()
	var last pipeline.Entry
	if err := json.Unmarshal(lines[len(lines)-1], &last); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(bytes.TrimSuffix(lines[len(lines)-1], []byte("\n")))
	e := pipeline.Entry{Seq: last.Seq + 1, Time: last.Time, Kind: pipeline.EntryStepDone, Stage: "boot",
		Step: step, Prev: hex.EncodeToString(sum[:])}
	b, _ := json.Marshal(e)
	return append(b, '\n')
}

// TestJournalTailTampering: removing the last entries, replacing the newest entry with another
// valid one, and appending a forged entry with the right hash all keep the hash chain valid; the
// witness catches each and names it, status and the runner refuse to trust the journal, and
// only an explicit AcceptTail continues (journaling what was accepted).
func TestJournalTailTampering(t *testing.T) {
	tests := []struct {
		name string
		kind string
		edit func(t *testing.T, lines [][]byte) [][]byte // lines without SplitAfter's empty tail
	}{
		{"last two entries removed", pipeline.TailTruncated, func(_ *testing.T, l [][]byte) [][]byte { return l[:len(l)-2] }},
		{"last entry removed", pipeline.TailTruncated, func(_ *testing.T, l [][]byte) [][]byte { return l[:len(l)-1] }},
		{"all entries removed", pipeline.TailTruncated, func(_ *testing.T, l [][]byte) [][]byte { return nil }},
		{"last entry replaced", pipeline.TailEdited, func(t *testing.T, l [][]byte) [][]byte {
			return append(l[:len(l)-1:len(l)-1], forged(t, l[:len(l)-1], "node:cp-0/power-on"))
		}},
		{"forged entry appended", pipeline.TailExtended, func(t *testing.T, l [][]byte) [][]byte {
			return append(l, forged(t, l, "node:cp-0/power-on"))
		}},
		{"two forged entries appended", pipeline.TailExtended, func(t *testing.T, l [][]byte) [][]byte {
			l = append(l, forged(t, l, "node:cp-0/power-on"))
			return append(l, forged(t, l, "node:cp-1/power-on"))
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path, lines := writeJournal(t, 5)
			lines = lines[:len(lines)-1]
			if err := os.WriteFile(path, bytes.Join(tc.edit(t, lines), nil), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := pipeline.VerifyChain(path); err != nil {
				t.Fatalf("the chain alone sees it (test is not about the tail): %v", err)
			}
			var te *pipeline.TailError
			if _, err := pipeline.VerifyTail(path); !errors.As(err, &te) || te.Kind != tc.kind {
				t.Fatalf("VerifyTail: %v, want a TailError %s", err, tc.kind)
			}
			st, err := (&pipeline.Runner{WorkDir: filepath.Dir(path)}).Status()
			if err != nil || st.Tail != tc.kind || !strings.Contains(st.Chain, tc.kind) {
				t.Errorf("status: tail %q chain %q err %v, want %s", st.Tail, st.Chain, err, tc.kind)
			}
			before, _ := os.ReadFile(path)
			if _, _, err := pipeline.OpenJournal(path); !errors.As(err, &te) {
				t.Fatalf("OpenJournal continued from a journal that was %s: %v", tc.kind, err)
			}
			if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
				t.Error("a refused open changed the journal")
			}
			j, warnings, err := pipeline.OpenJournalWith(path, pipeline.JournalOptions{AcceptTail: true})
			if err != nil || len(warnings) != 1 || !strings.Contains(warnings[0], tc.kind) {
				t.Fatalf("accepted open: %v %v", warnings, err)
			}
			if _, err := j.Append(pipeline.Entry{Kind: pipeline.EntryWarning, Error: warnings[0]}); err != nil {
				t.Fatal(err)
			}
			j.Close()
			if w, err := pipeline.VerifyTail(path); err != nil || !w {
				t.Errorf("after accepting: witnessed %v, %v", w, err)
			}
		})
	}
}

// TestJournalInterruptedAppend: a kill between the witness and the line (the line missing, torn,
// or complete) is an unacknowledged entry, not tampering; the next open goes on from it.
func TestJournalInterruptedAppend(t *testing.T) {
	for _, cut := range []string{"line missing", "line torn", "line complete"} {
		t.Run(cut, func(t *testing.T) {
			path, lines := writeJournal(t, 4)
			lines = lines[:len(lines)-1]
			if err := pipeline.PendingWitness(path); err != nil {
				t.Fatal(err)
			}
			last := lines[len(lines)-1]
			switch cut {
			case "line missing":
				lines = lines[:len(lines)-1]
			case "line torn":
				lines[len(lines)-1] = last[:len(last)/2]
			}
			if err := os.WriteFile(path, bytes.Join(lines, nil), 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := pipeline.VerifyTail(path); err != nil {
				t.Fatalf("VerifyTail: %v", err)
			}
			j, _, err := pipeline.OpenJournal(path)
			if err != nil {
				t.Fatalf("open after an interrupted append: %v", err)
			}
			if _, err := j.Append(pipeline.Entry{Kind: pipeline.EntryStepDone, Stage: "x", Step: "y"}); err != nil {
				t.Fatal(err)
			}
			j.Close()
			if _, err := pipeline.VerifyTail(path); err != nil {
				t.Fatal(err)
			}
		})
	}
	// a pending witness does not excuse more than the one entry it covers
	path, lines := writeJournal(t, 4)
	if err := pipeline.PendingWitness(path); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, bytes.Join(lines[:2], nil), 0o600); err != nil {
		t.Fatal(err)
	}
	var te *pipeline.TailError
	if _, err := pipeline.VerifyTail(path); !errors.As(err, &te) || te.Kind != pipeline.TailTruncated {
		t.Fatalf("two entries removed under a pending witness: %v", err)
	}
}

// TestJournalWithoutWitness: deleting the witness would launder a journal rolled back by hand, so
// a journal with entries and no witness is refused (status, VerifyTail, OpenJournal) and the refused
// open changes nothing on disk, its torn tail included; only AcceptTail continues, with a warning
// to journal, and witnesses it from then on.
func TestJournalWithoutWitness(t *testing.T) {
	path, _ := writeJournal(t, 3)
	if err := os.Remove(pipeline.HeadPath(path)); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"seq":4,"kind":"step-d`) // a torn tail: dropped only once the end is accepted
	f.Close()
	var te *pipeline.TailError
	if _, err := pipeline.VerifyTail(path); !errors.As(err, &te) || te.Kind != pipeline.TailUnwitnessed {
		t.Fatalf("VerifyTail without a witness: %v", err)
	}
	st, _ := (&pipeline.Runner{WorkDir: filepath.Dir(path)}).Status()
	if st.Tail != pipeline.TailUnwitnessed || !strings.Contains(st.Chain, pipeline.HeadFile) {
		t.Errorf("status: tail %q chain %q", st.Tail, st.Chain)
	}
	before, _ := os.ReadFile(path)
	if _, _, err := pipeline.OpenJournal(path); !errors.As(err, &te) || te.Kind != pipeline.TailUnwitnessed {
		t.Fatalf("open without a witness: %v", err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Error("a refused open changed the journal (its torn tail was trimmed)")
	}
	if _, err := os.Lstat(pipeline.HeadPath(path)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused open wrote a witness: %v", err)
	}
	j, warnings, err := pipeline.OpenJournalWith(path, pipeline.JournalOptions{AcceptTail: true})
	if err != nil || len(warnings) != 2 || !strings.Contains(strings.Join(warnings, " "), pipeline.TailUnwitnessed) {
		t.Fatalf("accepted open: %v %v", warnings, err)
	}
	j.Close()
	if w, err := pipeline.VerifyTail(path); !w || err != nil {
		t.Fatalf("witnessed after open: %v %v", w, err)
	}
}

// TestJournalRemovedUnderWitness: a journal deleted while its witness stays is a truncation; the
// refused open does not leave an empty journal behind.
func TestJournalRemovedUnderWitness(t *testing.T) {
	path, _ := writeJournal(t, 3)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	var te *pipeline.TailError
	if _, _, err := pipeline.OpenJournal(path); !errors.As(err, &te) || te.Kind != pipeline.TailTruncated {
		t.Fatalf("open of a removed journal: %v", err)
	}
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused open created the journal: %v", err)
	}
}
