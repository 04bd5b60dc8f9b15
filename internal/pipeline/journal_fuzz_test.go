package pipeline

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzJournalRead: any bytes as a journal and any witness are read without panicking, and a
// journal whose chain verifies always matches the witness written for it.
func FuzzJournalRead(f *testing.F) {
	good := `{"seq":1,"time":"2026-01-01T00:00:00Z","kind":"run-started","prev":""}` + "\n"
	f.Add([]byte(good), []byte(`{"entries":1,"head":"x"}`))
	f.Add([]byte(good+`{"seq":2,"time":"2026-`), []byte(`{"entries":2,"head":"x","prev":"y","pending":true}`))
	f.Add([]byte("{not json\n"+good), []byte(`{"entries":-1}`))
	f.Add([]byte(""), []byte(""))
	f.Fuzz(func(t *testing.T, data, witness []byte) {
		s := scan("journal.jsonl", data)
		chainErr := s.verify("journal.jsonl")
		var h head
		if json.Unmarshal(witness, &h) == nil {
			_, _ = checkTail("journal.jsonl", s.lines, h)
		}
		if chainErr == nil {
			if _, err := checkTail("journal.jsonl", s.lines, headOf(s.lines)); err != nil {
				t.Fatalf("a journal does not match its own witness: %v", err)
			}
		}
	})
}

// FuzzJournalPass: the streaming read that status uses finds exactly what scan, verify and
// checkTail find on the same bytes: the entries, the torn tail, the damage, the first chain break
// and the tail verdict.
func FuzzJournalPass(f *testing.F) {
	var good []byte
	prev := ""
	for i := 1; i <= 4; i++ {
		raw, _ := marshalEntry(Entry{Seq: int64(i), Kind: EntryStepDone, Step: "s", Prev: prev,
			Data: json.RawMessage(`"` + strings.Repeat("x", i*100_000) + `"`)}) // lines longer than the read buffer
		good = append(append(good, raw...), '\n')
		prev = hashLine(raw)
	}
	f.Add(good, []byte(`{"entries":4,"head":"`+prev+`"}`))
	f.Add(good[:len(good)-1], []byte(`{"entries":4,"head":"`+prev+`","pending":true}`))
	f.Add(append(append([]byte{}, good...), good...), []byte(`{"entries":3}`))
	f.Add(append([]byte(strings.Repeat("{", 300_000)+"\n"), good...), []byte(`{"entries":1}`))
	f.Add(append(append([]byte{}, good...), strings.Repeat("}", 300_000)+"\n"...), []byte(`{"entries":5}`))
	f.Add([]byte(`{"seq":1,"time":"2026-01-01T00:00:00Z","kind":"run-started","prev":""}`+"\n\n"), []byte(`{"entries":1}`))
	f.Add([]byte("\n{\n"), []byte(""))
	f.Fuzz(func(t *testing.T, data, witness []byte) {
		path := filepath.Join(t.TempDir(), JournalFile)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		var h head
		hok := json.Unmarshal(witness, &h) == nil
		s := scan(path, data)
		p, err := readPass(path, true, h.Entries, h.Entries-1)
		if err != nil {
			t.Fatal(err)
		}
		if p.n != int64(len(s.lines)) || len(p.entries) != len(s.lines) || p.torn != len(s.torn) {
			t.Fatalf("pass: %d lines (%d entries), torn %d; scan: %d lines, torn %d", p.n, len(p.entries), p.torn, len(s.lines), len(s.torn))
		}
		for i, l := range s.lines {
			a, _ := json.Marshal(p.entries[i])
			b, _ := json.Marshal(l.entry)
			if string(a) != string(b) {
				t.Fatalf("entry %d: pass %s, scan %s", i+1, a, b)
			}
		}
		if want, got := fmt.Sprint(s.verify(path)), fmt.Sprint(p.chainErr()); want != got {
			t.Fatalf("chain: pass %s, scan %s", got, want)
		}
		if hd := headOf(s.lines); p.hashAt(p.n) != hd.Head || p.hashAt(p.n-1) != hd.Prev {
			t.Fatalf("head: pass %q %q, scan %q %q", p.hashAt(p.n), p.hashAt(p.n-1), hd.Head, hd.Prev)
		}
		if hok {
			wp, werr := checkTail(path, s.lines, h)
			gp, gerr := checkTailHashes(path, p.n, p.hashAt, h)
			if wp != gp || fmt.Sprint(werr) != fmt.Sprint(gerr) {
				t.Fatalf("tail: pass %v %v, scan %v %v", gp, gerr, wp, werr)
			}
		}
	})
}
