package pipeline

import (
	"encoding/json"
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
