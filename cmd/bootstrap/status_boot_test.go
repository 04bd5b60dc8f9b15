package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/bmc"
	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
)

// A node booted without evidence is said in `status` (its caveat and a warning naming it) and in
// `status -o json` (per node: the evidence list, or the caveat); a node booted with evidence
// lists it.
func TestStatusShowsBootCaveat(t *testing.T) {
	dir := t.TempDir()
	site := writeLabSite(t, dir, "canary-boot")
	work := filepath.Join(dir, ".bootstrap")
	j, _, err := pipeline.OpenJournal(pipeline.JournalPath(work))
	if err != nil {
		t.Fatal(err)
	}
	why := "the ISO is served elsewhere (iso.baseURL): no fetch log shows the node read it"
	rec := func(r bmc.NodeResult) json.RawMessage { b, _ := json.Marshal(r); return b }
	now := time.Now()
	for _, e := range []pipeline.Entry{
		{Kind: pipeline.EntryRunStarted, Run: 1, Time: now, Data: json.RawMessage(`{"command":"run"}`)},
		{Kind: pipeline.EntryStageStarted, Run: 1, Stage: "boot", Attempt: 1, Reason: "first run", Time: now},
		{Kind: pipeline.EntryStepDone, Run: 1, Stage: "boot", Attempt: 1, Step: pipeline.NodeStep("m0", bmc.StepConfirm), Time: now,
			Data: rec(bmc.NodeResult{Node: "m0", Evidence: "power Off then On; ISO read by the node after the power action"})},
		{Kind: pipeline.EntryStepDone, Run: 1, Stage: "boot", Attempt: 1, Step: pipeline.NodeStep("w1", bmc.StepConfirm), Time: now,
			Data: rec(bmc.NodeResult{Node: "w1", Unverified: why})},
		{Kind: pipeline.EntryStageSucceeded, Run: 1, Stage: "boot", Attempt: 1, Time: now, Data: json.RawMessage(`{"nodes":[]}`)},
	} {
		if _, err := j.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	j.Close()

	code, out, errs := run(t, "status", "-f", site)
	for _, want := range []string{
		"boot, per node:",
		"m0  booted: power Off then On; ISO read by the node after the power action",
		"w1  booted, unverified: " + why,
		"warning: 1 node(s) booted without evidence (w1)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q (exit %d):\n%s%s", want, code, out, errs)
		}
	}
	_, out, _ = run(t, "status", "-f", site, "-o", "json")
	_, _, data := jsonLinesOf(t, out)
	var st struct {
		Boot []struct {
			Node, State, Unverified string
			Evidence                []string
		}
	}
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatal(err)
	}
	b := st.Boot
	if len(b) != 2 || b[0].Node != "m0" || b[0].State != "booted" || len(b[0].Evidence) != 2 || b[0].Unverified != "" ||
		b[1].Node != "w1" || b[1].State != "booted, unverified" || b[1].Unverified != why || len(b[1].Evidence) != 0 {
		t.Errorf("status -o json boot: %+v\n%s", b, data)
	}
}
