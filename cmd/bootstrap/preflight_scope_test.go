package main

import (
	"encoding/json"
	"github.com/bootstrap-dev/bootstrap/internal/isoserver"
	"strings"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
	"github.com/bootstrap-dev/bootstrap/internal/stages"
)

// With nothing of the lab running, preflight fails DNS, NTP, the BMCs, Git and the registry.
// Scoped to the stages a command runs, only the failures those stages need block; the others are
// shown as not blocking; a blocked run names the narrower command that proceeds.
func TestPreflightScopedToTheStagesThatRun(t *testing.T) {
	dir := t.TempDir()
	site := writeLabSite(t, dir, "canary-scope")

	code, out, errs := run(t, "preflight", "-f", site, "--only", "iso")
	if code != exitOK || !strings.Contains(out, "FAIL (not blocking)  bmc") ||
		!strings.Contains(out, "0 failed, 15 failed outside the stages selected (not blocking)") {
		t.Errorf("preflight --only iso: exit %d\n%s%s", code, out, errs)
	}
	code, out, errs = run(t, "preflight", "-f", site, "--from", "iso")
	if want := "`bootstrap run -f " + site + " --only iso` proceeds"; code != exitPreflight ||
		!strings.Contains(errs, "block only boot, install, configure, handoff: "+want) {
		t.Errorf("preflight --from iso: exit %d, want %d and %q\n%s%s", code, exitPreflight, want, out, errs)
	}
	if code, out, errs = run(t, "preflight", "-f", site); code != exitPreflight || strings.Contains(out, "not blocking") {
		t.Errorf("preflight of every stage: exit %d\n%s%s", code, out, errs)
	}

	// run: the real preflight stage (its registry checks left out: nothing here serves one) in
	// front of stages of the test's own.
	w := &world{}
	pipe := func(*isoserver.Server) []pipeline.Stage {
		return []pipeline.Stage{stages.Preflight{}, testStage{"mirror", w}, testStage{"iso", w}, testStage{"boot", w},
			installStage{testStage{stages.NameInstall, w}}, testStage{"handoff", w}}
	}
	runPipe := func(args ...string) (int, string) {
		code, out, errs := runWithPipeline(t, pipe, args...)
		return code, out + errs
	}
	code, all := runPipe("run", "-f", site, "--until", "iso")
	if code != exitOK || !strings.Contains(all, "FAIL (not blocking): bmc") || !strings.Contains(all, "iso        succeeded") ||
		!strings.Contains(all, "done: preflight..iso succeeded as asked") {
		t.Errorf("run --until iso with the BMCs, DNS and Git down: exit %d\n%s", code, all)
	}
	code, all = runPipe("run", "-f", site)
	want := "`bootstrap run -f " + site + " --until iso` proceeds"
	if code != exitPreflight || !strings.Contains(all, want) {
		t.Errorf("run: exit %d, want %d naming %q\n%s", code, exitPreflight, want, all)
	}
	// -o json: the result line's remedy names it too
	code, all = runPipe("run", "-f", site, "-o", "json")
	lines := strings.Split(strings.TrimSpace(all), "\n")
	var res Result
	for _, l := range lines {
		if strings.HasPrefix(l, `{"kind":"result"`) {
			_ = json.Unmarshal([]byte(l), &res)
		}
	}
	if code != exitPreflight || res.ExitCode != exitPreflight || !strings.Contains(res.Remedy, want) {
		t.Errorf("run -o json: exit %d, result %+v, want the remedy to name %q", code, res, want)
	}
}
