//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/bootstrap-dev/bootstrap/e2e/lab/harness"
	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
	"github.com/bootstrap-dev/bootstrap/internal/stages"
)

// Bad input and broken peers: each run ends with a clear error that names the thing and says how
// to fix it; after the fix the next run finishes, and nothing done before is done again.

func TestWrongBMCPassword(t *testing.T) {
	l := startLab(t)
	wrong := filepath.Join(l.Dir, "secrets", "bmc-gpu-1-wrong")
	if err := os.WriteFile(wrong, []byte("not-the-password"), 0o600); err != nil {
		t.Fatal(err)
	}
	var good any
	l.editSite(t, func(m map[string]any) {
		pw := node(m, "gpu-1")["bmc"].(map[string]any)["password"].(map[string]any)
		good, pw["file"] = pw["file"], "secrets/bmc-gpu-1-wrong"
	})
	r := l.run(t, "run")
	expectClearError(t, r, "gpu-1", []string{"password", "credential", "401", "authenticat"})
	if p := l.powerActions()["gpu-1"]; p != 0 {
		t.Errorf("gpu-1 was power-cycled %d times with a wrong password", p)
	}
	powered := l.powerActions()
	l.editSite(t, func(m map[string]any) {
		node(m, "gpu-1")["bmc"].(map[string]any)["password"].(map[string]any)["file"] = good
	})
	l.mustRun(t, 0, "run")
	expectNothingRedone(t, l, powered)
}

func TestUnreachableRegistry(t *testing.T) {
	l := startLab(t)
	var host any
	closed := l.IP(60).String() + ":1"
	l.editSite(t, func(m map[string]any) {
		reg := m["registry"].(map[string]any)
		host, reg["host"] = reg["host"], closed
	})
	r := l.run(t, "run")
	expectClearError(t, r, closed, []string{"reach", "connect", "refused", "unreachable"})
	if n := len(l.storedManifests(t)); n != 0 {
		t.Errorf("%d manifests pushed somewhere while the registry was unreachable", n)
	}
	if p := sum(l.powerActions()); p != 0 {
		t.Errorf("%d power actions with an unreachable registry", p)
	}
	l.editSite(t, func(m map[string]any) { m["registry"].(map[string]any)["host"] = host })
	l.mustRun(t, 0, "run")
	expectNothingRedone(t, l, nil)
}

// A MAC in the profile that the node's BMC does not report (a swapped cable, a typo) is caught
// before any server reboots.
func TestWrongMAC(t *testing.T) {
	l := startLab(t)
	const bad = "52:54:00:00:99:99"
	l.editSite(t, func(m map[string]any) {
		n := node(m, "master-1")
		n["bootMAC"] = bad
		n["interfaces"].([]any)[0].(map[string]any)["macAddress"] = bad
		n["networkConfig"].(map[string]any)["interfaces"].([]any)[0].(map[string]any)["mac-address"] = bad
	})
	r := l.run(t, "run")
	expectClearError(t, r, "master-1", []string{bad, strings.ToUpper(bad)})
	if p := sum(l.powerActions()); p != 0 {
		t.Errorf("%d power actions although master-1's MAC is wrong: %v", p, l.powerActions())
	}
}

// The registry answers 500 for every request of one repository: that image is listed as failed,
// the rest is mirrored, and the next run (fault gone) copies only what is missing.
func TestRegistry500ForOneImage(t *testing.T) {
	l := startLab(t)
	l.reg.Proxy.Fail("/ubi9/ubi/", 500)
	r := l.run(t, "run")
	expectClearError(t, r, "ubi9/ubi", []string{"500", "retry", "run again", "replay"})
	stored := l.storedManifests(t)
	for _, m := range stored {
		if strings.Contains(m, "ubi9/ubi@") {
			t.Errorf("%s stored although every request for it failed", m)
		}
	}
	if len(stored) < 20 {
		t.Errorf("only %d manifests mirrored besides the failing image", len(stored))
	}
	l.reg.Proxy.Fail("/ubi9/ubi/", 0)
	l.mustRun(t, 0, "run")
	after := l.journal(t)
	if got, want := l.storedManifests(t), l.content(t).plannedManifests(); !reflect.DeepEqual(got, want) {
		t.Errorf("registry holds %v, want %v", got, want)
	}
	count := map[string]int{}
	for _, e := range entries(after, pipeline.EntryStepDone, "mirror") {
		count[e.Step]++
	}
	for step, n := range count {
		if n > 1 {
			t.Errorf("journaled %d times: %s", n, step)
		}
	}
	if n := count["image registry.redhat.io/ubi9/ubi:9.5 -> "+l.Site.Registry.Host+"/ocp4/ubi9/ubi:9.5"]; n != 1 {
		t.Errorf("the failed image was journaled %d times after the fix, want 1 (steps: %v)", n, count)
	}
}

// expectClearError checks a failed run: non-zero exit, the culprit named, a hint of the cause
// (one of hints, case-insensitive), and a remedy.
func expectClearError(t *testing.T, r result, culprit string, hints []string) {
	t.Helper()
	if r.code == 0 {
		t.Fatalf("run succeeded; want a failure naming %s", culprit)
	}
	for _, line := range strings.Split(r.out, "\n") {
		if strings.HasPrefix(line, "error:") || strings.HasPrefix(line, "remedy:") {
			t.Logf("%.400s", line)
		}
	}
	low := strings.ToLower(r.out)
	if !strings.Contains(r.out, culprit) {
		t.Errorf("the error does not name %s:\n%s", culprit, tail(r.out, 25))
	}
	found := false
	for _, h := range hints {
		found = found || strings.Contains(low, strings.ToLower(h))
	}
	if !found {
		t.Errorf("the error gives no cause (any of %v):\n%s", hints, tail(r.out, 25))
	}
	if !strings.Contains(low, "remedy") && !strings.Contains(low, "fix") && !strings.Contains(low, "check") {
		t.Errorf("the error gives no remedy:\n%s", tail(r.out, 25))
	}
}

// expectNothingRedone checks a run that finished after a failure: no step journaled twice, and
// nodes powered before (powered) were not power-cycled again; every node powered once.
func expectNothingRedone(t *testing.T, l *testLab, powered map[string]int) {
	t.Helper()
	seen := map[string]int{}
	for _, e := range entries(l.journal(t), pipeline.EntryStepDone, "") {
		if e.Stage != "preflight" && !actionRecord(e) {
			seen[e.Stage+" "+e.Step]++
		}
	}
	for k, n := range seen {
		if n > 1 {
			t.Errorf("step %q journaled %d times", k, n)
		}
	}
	for n, p := range l.powerActions() {
		if p != 1 {
			t.Errorf("node %s: %d power actions (before the fix: %d), want 1", n, p, powered[n])
		}
	}
}

func sum(m map[string]int) int {
	s := 0
	for _, v := range m {
		s += v
	}
	return s
}

// actionRecord reports whether a step entry records one change configure or handoff made to the
// cluster (stages.AppliedStep: one entry per object applied or patched, as it is made, so a
// killed attempt's changes are on record). Such entries repeat by design (every object of a
// stage, Argo CD's refresh requests); they are evidence, not markers of work a resume skips.
func actionRecord(e pipeline.Entry) bool {
	return (e.Stage == "configure" || e.Stage == "handoff") && e.Step == stages.AppliedStep
}

// TestGitOpsPushBreaksThenFixed: after a whole run, someone pushes a commit whose root path does
// not render. `bootstrap replay handoff` (the site's runbook after a GitOps change) fails with
// Argo CD's own message naming the missing file, not with a verdict on the previous commit;
// after a fix is pushed, the same replay succeeds at the fix's commit.
func TestGitOpsPushBreaksThenFixed(t *testing.T) {
	l := startLab(t)
	l.until = ""
	l.mustRun(t, 0, "run")
	if l.git == nil {
		t.Fatal("the default lab has no Git server")
	}
	good := "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- ../applications\n- tenants.yaml\n"
	broken := good + "- quota-missing.yaml\n"
	bad, err := l.git.Commit("a resource that is not there", map[string]string{harness.GitOpsPath + "/kustomization.yaml": broken}, false)
	if err != nil {
		t.Fatal(err)
	}
	r := l.run(t, "replay", "handoff")
	expectClearError(t, r, "quota-missing.yaml", []string{"ComparisonError"})
	if !strings.Contains(r.out, "describe application root") || !strings.Contains(r.out, "bootstrap replay handoff") {
		t.Errorf("the remedy does not point at Argo CD's account and the replay:\n%s", tail(r.out, 25))
	}
	if !strings.Contains(r.out, bad) {
		t.Errorf("the failed replay does not name the commit it judged (%s):\n%s", bad, tail(r.out, 25))
	}
	fixed, err := l.git.Commit("the fix", map[string]string{harness.GitOpsPath + "/kustomization.yaml": good}, false)
	if err != nil {
		t.Fatal(err)
	}
	ok := l.mustRun(t, 0, "replay", "handoff")
	if !strings.Contains(ok.out, "Synced and Healthy at "+fixed) {
		t.Errorf("the replay after the fix does not end at its commit %s:\n%s", fixed, tail(ok.out, 25))
	}
	checkArgoCDOwnsSite(t, l)
}
