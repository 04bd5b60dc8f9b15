//go:build e2e

package e2e

import (
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/bootstrap-dev/bootstrap/e2e/lab/harness"
	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
)

// The whole pipeline against the lab, then a second run that does nothing and says so: no stage
// runs again, no BMC is written to, nothing is pushed to the registry. Then the evidence report
// of both runs, checked as rendered by headless Chromium (report_test.go).
func TestFullRunThenNothingToDo(t *testing.T) {
	l := startLab(t)
	l.until = "" // the whole pipeline, through handoff
	first := l.mustRun(t, 0, "run")
	j := l.journal(t)
	for _, st := range []string{"mirror", "iso", "boot", "install", "configure", "handoff"} {
		if len(entries(j, pipeline.EntryStageSucceeded, st)) != 1 {
			t.Errorf("stage %s did not succeed once:\n%s", st, tail(first.out, 30))
		}
	}
	if got, want := l.storedManifests(t), l.content(t).plannedManifests(); !reflect.DeepEqual(got, want) {
		t.Errorf("registry holds %d manifests, content.json plans %d:\n got %v\nwant %v", len(got), len(want), got, want)
	}
	for n, p := range l.powerActions() {
		if p != 1 {
			t.Errorf("node %s: %d power actions, want 1", n, p)
		}
		if s := l.bmcs.Sims[n].Stats(); s.RangeRequests == 0 || !strings.HasSuffix(s.BootedFrom, ".iso") {
			t.Errorf("node %s: booted from %q after %d range requests; want the ISO, fetched with ranges", n, s.BootedFrom, s.RangeRequests)
		}
	}
	// The handoff proved the repository from the jump host before changing anything, and the run
	// ends by printing the Argo CD console.
	// Then what now: the kubeconfig to export, the console, Argo CD and how to log in.
	for _, want := range []string{harness.GitOpsPath + " is a directory there", "Argo CD owns the cluster now", "console https://",
		"export KUBECONFIG=" + filepath.Join(l.workDir(), "kubeconfig"), "console:  https://console-openshift-console.apps.",
		"Argo CD:  https://", "LOG IN VIA OPENSHIFT",
		// the install's phase bar ends on its last phase with every node done
		fmt.Sprintf("phase 6/6 cluster is healthy, nodes %d/%d done: %d Done", len(l.bmcs.Sims), len(l.bmcs.Sims), len(l.bmcs.Sims))} {
		if !strings.Contains(first.out, want) {
			t.Errorf("first run does not say %q:\n%s", want, tail(first.out, 30))
		}
	}
	checkArgoCDOwnsSite(t, l)
	writes, pushes := l.bmcWrites(), l.reg.Proxy.Writes()
	before := len(j)

	second := l.mustRun(t, 0, "run")
	j = l.journal(t)[before:]
	if es := entries(j, pipeline.EntryStageStarted, ""); len(es) != 1 { // preflight runs on every pass
		for _, e := range es {
			t.Errorf("second run started stage %s: %s", e.Stage, e.Reason)
		}
	}
	for _, st := range []string{"mirror", "iso", "boot", "install", "configure", "handoff"} {
		if len(entries(j, pipeline.EntryStageSkipped, st)) != 1 {
			t.Errorf("second run did not skip %s", st)
		}
	}
	// Preflight (read-only, every pass) journals its results as evidence; nothing else may act.
	steps := entries(j, pipeline.EntryStepDone, "")
	if n := len(steps) - len(entries(j, pipeline.EntryStepDone, "preflight")); n != 0 {
		t.Errorf("second run recorded %d steps outside preflight", n)
	}
	if !reflect.DeepEqual(l.bmcWrites(), writes) {
		t.Errorf("second run wrote to BMCs: before %v after %v", writes, l.bmcWrites())
	}
	if p := l.reg.Proxy.Writes(); p != pushes {
		t.Errorf("second run pushed %d times to the registry", p-pushes)
	}
	low := strings.ToLower(second.out)
	// Each skipped stage is "done earlier (journaled)" (progress.Verdicts), never "succeeded" in this run.
	if n := strings.Count(low, "done earlier (journaled)"); n != 6 {
		t.Errorf("second run names %d stages done earlier (journaled), want 6:\n%s", n, second.out)
	}
	t.Logf("first run %s, second run %s", first.took, second.took)

	// The evidence report of both runs, rendered in headless Chromium (last: it edits the journal).
	checkReportInChromium(t, l)
}

// `bootstrap replay boot --node gpu-1` talks to gpu-1's BMC only and power-cycles it once more.
func TestReplayBootOneNode(t *testing.T) {
	l := startLab(t)
	l.until = "" // the whole pipeline, through handoff
	l.mustRun(t, 0, "run")
	writes, power := l.bmcWrites(), l.powerActions()
	r := l.mustRun(t, 0, "replay", "boot", "--node", "gpu-1")
	for n, w := range l.bmcWrites() {
		switch {
		case n == "gpu-1" && w == writes[n]:
			t.Errorf("replay --node gpu-1 did not touch gpu-1's BMC:\n%s", r.out)
		case n != "gpu-1" && w != writes[n]:
			t.Errorf("replay --node gpu-1 wrote %d times to %s's BMC", w-writes[n], n)
		}
	}
	for n, p := range l.powerActions() {
		want := power[n]
		if n == "gpu-1" {
			want++
		}
		if p != want {
			t.Errorf("node %s: %d power actions after the replay, want %d", n, p, want)
		}
	}
}
