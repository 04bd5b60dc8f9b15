package pipeline

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"
)

// writeBenchJournal writes a chained journal of n step-done entries and its witness, as Append
// would (without an fsync per line).
func writeBenchJournal(tb testing.TB, dir string, n int) {
	tb.Helper()
	path := JournalPath(dir)
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	t0 := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	prev, before := "", ""
	buf := make([]byte, 0, 1<<20)
	for i := 1; i <= n; i++ {
		e := Entry{Seq: int64(i), Time: t0.Add(time.Duration(i) * time.Millisecond), Kind: EntryStepDone, Run: 1,
			Stage: "mirror", Step: NodeStep(fmt.Sprintf("w%d", i%8), fmt.Sprintf("blob-%d", i)), Attempt: 1,
			Fingerprint: "sha256:00", Prev: prev,
			Data: json.RawMessage(fmt.Sprintf(`{"digest":"sha256:%064x","bytes":%d}`, i, 73400320+i))}
		if i == 1 {
			e.Kind, e.Step, e.Data = EntryStageStarted, "", nil
		}
		raw, err := marshalEntry(e)
		if err != nil {
			tb.Fatal(err)
		}
		buf = append(append(buf, raw...), '\n')
		if len(buf) > 1<<19 {
			if _, err := f.Write(buf); err != nil {
				tb.Fatal(err)
			}
			buf = buf[:0]
		}
		before, prev = prev, hashLine(raw)
	}
	if _, err := f.Write(buf); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
	hw, err := openHead(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer hw.close()
	if err := hw.put(head{Entries: int64(n), Head: prev, Prev: before}, false); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkStatus100k measures `bootstrap status` on a 100,000-entry journal with its witness:
// read, chain check, tail check and fold. Peak memory: run it once under /usr/bin/time -v.
func BenchmarkStatus100k(b *testing.B) {
	dir := b.TempDir()
	writeBenchJournal(b, dir, 100_000)
	r := &Runner{WorkDir: dir}
	if st, err := r.Status(); err != nil || st.Chain != "" || st.Entries != 100_000 {
		b.Fatalf("status: %v %q %d", err, st.Chain, st.Entries)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Status(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOpenJournal100k measures opening a 100,000-entry journal for appends, as every `run`
// and `replay` does: the chain checked, the witness compared, the entries decoded.
func BenchmarkOpenJournal100k(b *testing.B) {
	dir := b.TempDir()
	writeBenchJournal(b, dir, 100_000)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		j, _, err := OpenJournal(JournalPath(dir))
		if err != nil {
			b.Fatal(err)
		}
		if len(j.Entries()) != 100_000 {
			b.Fatalf("%d entries", len(j.Entries()))
		}
		j.Close()
	}
}
