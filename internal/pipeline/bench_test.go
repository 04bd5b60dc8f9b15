package pipeline_test

import (
	"path/filepath"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
)

// BenchmarkAppend measures one journaled step: marshal, write, fsync. It bounds how many steps a
// second any stage can record.
func BenchmarkAppend(b *testing.B) {
	j, _, err := pipeline.OpenJournal(filepath.Join(b.TempDir(), pipeline.JournalFile))
	if err != nil {
		b.Fatal(err)
	}
	defer j.Close()
	data := []byte(`{"digest":"sha256:4f5a8e0f9b1c2d3e4f5a8e0f9b1c2d3e4f5a8e0f9b1c2d3e4f5a8e0f9b1c2d3e","bytes":73400320}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := j.Append(pipeline.Entry{Kind: pipeline.EntryStepDone, Stage: "mirror", Step: "blob", Attempt: 1,
			Fingerprint: "sha256:00", Data: data}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFold measures folding a 100,000-entry journal, as status and every stage start do.
func BenchmarkFold(b *testing.B) {
	entries := make([]pipeline.Entry, 100_000)
	for i := range entries {
		entries[i] = pipeline.Entry{Seq: int64(i + 1), Kind: pipeline.EntryStepDone, Stage: "mirror", Attempt: 1,
			Step: pipeline.NodeStep("w"+string(rune('0'+i%8)), "blob")}
	}
	entries[0] = pipeline.Entry{Seq: 1, Kind: pipeline.EntryStageStarted, Stage: "mirror", Attempt: 1}
	b.ReportAllocs()
	for b.Loop() {
		pipeline.Fold(entries)
	}
}
