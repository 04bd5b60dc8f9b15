package report_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
	"github.com/bootstrap-dev/bootstrap/internal/report"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// childEnv, when set to a work dir, makes the test binary run the boot pipeline there and hang
// after gpu-2's power step, to be killed with SIGKILL by the parent.
const childEnv = "REPORT_TEST_CHILD_DIR"

func TestMain(m *testing.M) {
	if dir := os.Getenv(childEnv); dir != "" {
		b := &nodeStage{input: "v1", nodes: []string{"gpu-1", "gpu-2"}, hangAfter: "gpu-2"}
		r := &pipeline.Runner{Stages: []pipeline.Stage{copyStage{}, b}, Site: &site.Site{}, WorkDir: dir, Command: "run", Version: "test"}
		err := r.Run(context.Background(), pipeline.RunOptions{})
		fmt.Fprintln(os.Stderr, "child ended:", err)
		os.Exit(3)
	}
	os.Exit(m.Run())
}

// copyStage records two steps and writes one file, like a small mirror stage.
type copyStage struct{}

func (copyStage) Name() string                      { return "mirror" }
func (copyStage) Summary() string                   { return "test" }
func (copyStage) Inputs(*pipeline.Env) (any, error) { return "v1", nil }
func (copyStage) Run(_ context.Context, env *pipeline.Env) (any, error) {
	for _, d := range []string{"sha256:aaa", "sha256:bbb"} {
		if err := env.Steps.Record("image "+d, map[string]string{"digest": d}); err != nil {
			return nil, err
		}
	}
	return map[string]int{"images": 2}, os.WriteFile(filepath.Join(env.WorkDir, "idms.yaml"), []byte("kind: ImageDigestMirrorSet\n"), 0o644)
}

// nodeStage powers nodes the way the boot stage journals it: node:<n>/power, then
// node:<n>/booted with the BMC's firmware. A node whose power step an earlier attempt recorded
// is carried (node:<n>/carried) instead of powered again.
type nodeStage struct {
	input     string
	nodes     []string
	failAt    string // fail before powering this node
	hangAfter string // hang (until killed) after powering this node
}

type remedied struct{ msg, remedy string }

func (e remedied) Error() string  { return e.msg }
func (e remedied) Remedy() string { return e.remedy }

func (*nodeStage) Name() string    { return "boot" }
func (*nodeStage) Summary() string { return "test boot" }
func (s *nodeStage) Inputs(*pipeline.Env) (any, error) {
	return map[string]any{"in": s.input, "nodes": s.nodes}, nil
}
func (s *nodeStage) Run(ctx context.Context, env *pipeline.Env) (any, error) {
	for _, n := range s.nodes {
		power := pipeline.NodeStep(n, "power")
		if !env.Steps.Done(power, nil) && env.Steps.Previous(power, nil) {
			if !env.Steps.Done(pipeline.NodeStep(n, "carried"), nil) {
				if err := env.Steps.Record(pipeline.NodeStep(n, "carried"), map[string]string{"from": "earlier attempt"}); err != nil {
					return nil, err
				}
			}
			continue
		}
		if n == s.failAt {
			return nil, remedied{n + ": BMC refused the password", "fix bmc.password of " + n}
		}
		if !env.Steps.Done(power, nil) {
			if err := env.Steps.Record(power, map[string]string{"action": "ForceRestart"}); err != nil {
				return nil, err
			}
		}
		if n == s.hangAfter {
			<-ctx.Done() // the child's context is never cancelled: SIGKILL ends it
		}
		booted := pipeline.NodeStep(n, "booted")
		if !env.Steps.Done(booted, nil) {
			if err := env.Steps.Record(booted, map[string]string{"node": n, "vendor": "Dell", "model": "PowerEdge XE9680",
				"firmware": "7.00.00." + n[len(n)-1:]}); err != nil {
				return nil, err
			}
		}
	}
	return map[string]int{"nodes": len(s.nodes)}, nil
}

// applyStage journals an applied step the way configure does (stages.AppliedStep).
type applyStage struct{}

func (applyStage) Name() string                      { return "configure" }
func (applyStage) Summary() string                   { return "test" }
func (applyStage) Inputs(*pipeline.Env) (any, error) { return "v1", nil }
func (applyStage) Run(_ context.Context, env *pipeline.Env) (any, error) {
	return nil, env.Steps.Record("applied", map[string]any{"changed": 2, "objects": []map[string]string{
		{"apiVersion": "config.openshift.io/v1", "kind": "ImageDigestMirrorSet", "name": "bootstrap-mirror", "action": "created",
			"sha256": "1f67d5a40e398f9fd03143d25042f69a3e6b3529e30a14000093ed223ab28436", "source": "idms.yaml"},
		{"apiVersion": "v1", "kind": "Secret", "namespace": "openshift-gitops", "name": "repo", "action": "created"},
	}})
}

func TestReport(t *testing.T) {
	dir := t.TempDir()
	r := &pipeline.Runner{Stages: []pipeline.Stage{copyStage{}, applyStage{}}, Site: &site.Site{}, WorkDir: dir}
	if err := r.Run(context.Background(), pipeline.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	rep, err := report.Build(r, "lab")
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Chain.Verified || rep.Chain.Entries == 0 {
		t.Fatalf("chain: %+v", rep.Chain)
	}
	if a := rep.History.Attempt("mirror", 1); a == nil || len(a.Steps) != 2 {
		t.Fatalf("mirror attempt 1: %+v, want 2 steps", a)
	}
	if len(rep.Files) != 1 || rep.Files[0].Path != "idms.yaml" ||
		rep.Files[0].SHA256 != "a6ea237c6e86f11e842f23fad2b2be6d836f446c73284d03d8be02a463f04c74" {
		t.Fatalf("files: %+v", rep.Files)
	}
	if ap := rep.Evidence.Applied; len(ap) != 2 || ap[0].Stage != "configure" || ap[0].Attempt != 1 || ap[0].Run != rep.History.Runs[0].Seq ||
		ap[0].Object() != "ImageDigestMirrorSet bootstrap-mirror" || ap[0].Action != "created" || ap[1].Object() != "Secret openshift-gitops/repo" {
		t.Errorf("applied: %+v", ap)
	}
	var md bytes.Buffer
	if err := rep.Markdown(&md); err != nil {
		t.Fatal(err)
	}
	// Step data as readable fields, never raw JSON; the summary first; who ran each run.
	u, _ := user.Current()
	for _, want := range []string{"## Summary", "**Verdict:**", "digest: sha256:bbb", "(by " + u.Username + "@"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
	if strings.Contains(md.String(), `{"digest"`) {
		t.Errorf("markdown shows step data as raw JSON:\n%s", md.String())
	}
	for _, want := range []string{"hash chain **verified**", "| mirror | succeeded |", "sha256:bbb", "`idms.yaml`",
		"ImageDigestMirrorSet bootstrap-mirror | created | `1f67d5a40e398f9fd03143d25042f69a3e6b3529e30a14000093ed223ab28436`",
		"Secret openshift-gitops/repo | created | " + report.SecretNotHashed} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}

	var html bytes.Buffer
	if err := rep.HTML(&html); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`id="summary"`, `id="nodes"`, "<svg", "<rect", `<dt>digest</dt><dd>sha256:bbb</dd>`} {
		if !strings.Contains(html.String(), want) {
			t.Errorf("html lacks %q", want)
		}
	}
	for _, want := range []string{`id="timeline"`, "hash chain verified", "a6ea237c6e86f11e842f23fad2b2be6d836f446c73284d03d8be02a463f04c74"} {
		if !strings.Contains(html.String(), want) {
			t.Errorf("html lacks %q", want)
		}
	}
	if strings.Contains(html.String(), "<script") || strings.Contains(html.String(), "http://") {
		t.Error("html is not self-contained")
	}

	// Edit one entry: the report says the chain is broken, naming the entry.
	path := pipeline.JournalPath(dir)
	b, _ := os.ReadFile(path)
	if err := os.WriteFile(path, bytes.Replace(b, []byte("sha256:aaa"), []byte("sha256:zzz"), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	rep, err = report.Build(r, "lab")
	if err != nil {
		t.Fatal(err)
	}
	if rep.Chain.Verified || rep.Chain.Error == "" {
		t.Fatalf("edited journal verified: %+v", rep.Chain)
	}
	md.Reset()
	_ = rep.Markdown(&md)
	if !strings.Contains(md.String(), "HASH CHAIN BROKEN") {
		t.Fatalf("markdown does not say the chain is broken:\n%s", md.String())
	}
}

// TestReportEveryAttempt: a boot attempt that fails, is resumed by a run killed with SIGKILL,
// is resumed to success, then a new attempt (one more node) that carries the first two nodes.
// The report lists every run and every execution, and attributes each node's BMC actions to the
// attempt and run that did them.
// An empty journal is "no entries", never "verified".
func TestReportEmptyJournal(t *testing.T) {
	r := &pipeline.Runner{Stages: []pipeline.Stage{copyStage{}}, WorkDir: t.TempDir()}
	rep, err := report.Build(r, "lab")
	if err != nil {
		t.Fatal(err)
	}
	var md, html bytes.Buffer
	if err := rep.Markdown(&md); err != nil {
		t.Fatal(err)
	}
	if err := rep.HTML(&html); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"markdown": md.String(), "html": html.String()} {
		if !strings.Contains(out, "no entries") || strings.Contains(out, "verified") {
			t.Errorf("%s of an empty journal does not say \"no entries\" or claims verified:\n%s", name, out)
		}
	}
	if rep.Summary.Verdict != "incomplete: mirror has not run" {
		t.Errorf("verdict %q", rep.Summary.Verdict)
	}
}

func TestReportEveryAttempt(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	boot := &nodeStage{input: "v1", nodes: []string{"gpu-1", "gpu-2"}, failAt: "gpu-2"}
	r := &pipeline.Runner{Stages: []pipeline.Stage{copyStage{}, boot}, Site: &site.Site{}, WorkDir: dir, Command: "run", Version: "test"}

	// Run 1: gpu-1 powered, then gpu-2's BMC refuses: attempt 1 failed.
	var se *pipeline.StageError
	if err := r.Run(ctx, pipeline.RunOptions{}); !errors.As(err, &se) || se.Stage != "boot" {
		t.Fatalf("run 1: %v, want boot to fail", err)
	}
	// Run 2: a child process resumes attempt 1, powers gpu-2 and is killed.
	killChildAfter(t, dir, pipeline.NodeStep("gpu-2", "power"))
	// Run 3: attempt 1 resumes and succeeds.
	boot.failAt = ""
	if err := r.Run(ctx, pipeline.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	// Run 4: one more node: attempt 2 carries gpu-1 and gpu-2, powers gpu-3.
	boot.input, boot.nodes = "v2", []string{"gpu-1", "gpu-2", "gpu-3"}
	if err := r.Run(ctx, pipeline.RunOptions{}); err != nil {
		t.Fatal(err)
	}

	rep, err := report.Build(r, "lab")
	if err != nil {
		t.Fatal(err)
	}
	h := rep.History
	want := []pipeline.RunResult{pipeline.RunFailed, pipeline.RunKilled, pipeline.RunSucceeded, pipeline.RunSucceeded}
	if len(h.Runs) != len(want) {
		t.Fatalf("%d runs, want %d", len(h.Runs), len(want))
	}
	run := map[int]int64{}
	for i, w := range want {
		if h.Runs[i].Result != w {
			t.Errorf("run %d: %s, want %s", i+1, h.Runs[i].Result, w)
		}
		run[i+1] = h.Runs[i].Seq
	}
	a1, a2 := h.Attempt("boot", 1), h.Attempt("boot", 2)
	if a1 == nil || a2 == nil {
		t.Fatalf("boot attempts: %+v", h.Attempts)
	}
	var got []string
	for _, x := range a1.Executions {
		got = append(got, fmt.Sprintf("%d:%s", x.Run, x.State))
	}
	if w := fmt.Sprintf("[%d:failed %d:interrupted %d:succeeded]", run[1], run[2], run[3]); fmt.Sprint(got) != w {
		t.Errorf("boot attempt 1 executions %v, want %s", got, w)
	}
	if a1.Latest || !a2.Latest || a2.State != pipeline.StateSucceeded || len(a2.Executions) != 1 || a2.Executions[0].Run != run[4] {
		t.Errorf("boot attempt 2: %+v", a2)
	}

	// Each node's actions, in order: "action attempt run".
	wantBMC := map[string][]string{
		"gpu-1": {fmt.Sprintf("power 1 %d", run[1]), fmt.Sprintf("booted 1 %d", run[1]), fmt.Sprintf("carried 2 %d", run[4])},
		"gpu-2": {fmt.Sprintf("power 1 %d", run[2]), fmt.Sprintf("booted 1 %d", run[3]), fmt.Sprintf("carried 2 %d", run[4])},
		"gpu-3": {fmt.Sprintf("power 2 %d", run[4]), fmt.Sprintf("booted 2 %d", run[4])},
	}
	if len(rep.Evidence.BMC) != len(wantBMC) {
		t.Errorf("BMC actions for %d nodes, want %d", len(rep.Evidence.BMC), len(wantBMC))
	}
	for _, n := range rep.Evidence.BMC {
		var got []string
		for _, a := range n.Actions {
			got = append(got, fmt.Sprintf("%s %d %d", a.Action, a.Attempt, a.Run))
			if (a.Action == "carried") != (a.Note != "") {
				t.Errorf("%s %s: note %q; only bookkeeping records carry one", n.Node, a.Action, a.Note)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(wantBMC[n.Node]) {
			t.Errorf("node %s actions %v, want %v", n.Node, got, wantBMC[n.Node])
		}
	}
	firmware := map[string]string{}
	for _, v := range rep.Evidence.Versions {
		firmware[v.Component] = v.Version
	}
	if firmware["BMC gpu-2"] != "7.00.00.2" || firmware["BMC gpu-3"] != "7.00.00.3" || firmware["bootstrap"] != "test" {
		t.Errorf("versions: %+v", rep.Evidence.Versions)
	}

	var md, html bytes.Buffer
	if err := rep.Markdown(&md); err != nil {
		t.Fatal(err)
	}
	if err := rep.HTML(&html); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"gpu-2: BMC refused the password", "fix bmc.password of gpu-2", "killed", "resume 2",
		"bootstrap run", "7.00.00.3"} {
		if !strings.Contains(html.String(), want) {
			t.Errorf("html lacks %q", want)
		}
	}
	// One row per execution: 1 mirror + 3 boot attempt 1 + 1 boot attempt 2.
	rows := regexp.MustCompile(`(?m)^\| (mirror|boot) \| \d`).FindAllString(md.String(), -1)
	if len(rows) != 5 {
		t.Errorf("markdown attempts table has %d execution rows, want 5:\n%s", len(rows), md.String())
	}
	for _, want := range []string{"### boot attempt 1: 4 steps", "### boot attempt 2 (latest): 4 steps", "| killed |", "| failed |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
}

// killChildAfter runs the pipeline in a child process on dir and kills it with SIGKILL once the
// journal records step.
func killChildAfter(t *testing.T, dir, step string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+dir)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.After(time.Minute)
	for {
		entries, _, _ := pipeline.ReadJournal(pipeline.JournalPath(dir))
		for _, e := range entries {
			if e.Kind == pipeline.EntryStepDone && e.Step == step {
				if err := cmd.Process.Kill(); err != nil {
					t.Fatal(err)
				}
				<-exited
				return
			}
		}
		select {
		case err := <-exited:
			t.Fatalf("child ended before it was killed: %v\n%s", err, out.String())
		case <-deadline:
			_ = cmd.Process.Kill()
			t.Fatalf("child journaled no %s in a minute\n%s", step, out.String())
		case <-time.After(5 * time.Millisecond):
		}
	}
}
