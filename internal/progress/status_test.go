package progress

import (
	"strings"
	"testing"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
)

func TestWriteStatus(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	st := pipeline.Fold([]pipeline.Entry{
		{Seq: 1, Time: at(0), Kind: pipeline.EntryRunStarted, Data: []byte(`{"mode":"run","command":"bootstrap run -f site.yaml"}`)},
		{Seq: 2, Time: at(1), Kind: pipeline.EntryStageStarted, Stage: "mirror", Attempt: 1},
		{Seq: 3, Time: at(61), Kind: pipeline.EntryStageSucceeded, Stage: "mirror", Attempt: 1},
		{Seq: 4, Time: at(62), Kind: pipeline.EntryStageStarted, Stage: "boot", Attempt: 1},
		{Seq: 5, Time: at(70), Kind: pipeline.EntryStepDone, Stage: "boot", Attempt: 1, Step: pipeline.NodeStep("w1", "power-on")},
		{Seq: 6, Time: at(72), Kind: pipeline.EntryStageFailed, Stage: "boot", Attempt: 1, Error: "w3: insert media: 401",
			Remedy: "check the BMC credentials file of w3"},
		{Seq: 7, Time: at(73), Kind: pipeline.EntryRunFinished, Error: "stage boot: w3: insert media: 401"},
	})
	st.Stages = append(st.Stages, pipeline.StageStatus{Name: "install", State: pipeline.StatePending})
	st.Head = "abc123"
	var b strings.Builder
	if err := WriteStatus(&b, st); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"last run: run bootstrap run -f site.yaml",
		"failed",
		"mirror   succeeded  1        -      1m0s",
		"boot     failed     1        1      10s   w3: insert media: 401",
		"install  pending    -        -      -",
		"w1                     1 steps, last power-on",
		"remedy: check the BMC credentials file of w3",
		"hash chain verified, head abc123",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	st.Chain = "line 3 (seq 3): edited"
	b.Reset()
	WriteStatus(&b, st)
	if !strings.Contains(b.String(), "JOURNAL DAMAGED: line 3") {
		t.Errorf("damaged journal not shown:\n%s", b.String())
	}
}

func TestWritePlan(t *testing.T) {
	var b strings.Builder
	WritePlan(&b, []pipeline.StagePlan{
		{Stage: "mirror", Action: pipeline.PlanSkip, Reason: "finished with the same inputs; verified"},
		{Stage: "iso", Action: pipeline.PlanRun, Reason: "inputs changed", Lines: []string{"write agent.iso"}},
	})
	want := "mirror     skip  finished with the same inputs; verified\niso        run   inputs changed\n             write agent.iso\n"
	if b.String() != want {
		t.Errorf("got\n%q\nwant\n%q", b.String(), want)
	}
}
