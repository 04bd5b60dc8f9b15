package main

import (
	"bytes"
	"context"
	"errors"
	"github.com/bootstrap-dev/bootstrap/internal/isoserver"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
	"github.com/bootstrap-dev/bootstrap/internal/progress"
	"github.com/bootstrap-dev/bootstrap/internal/stages"
)

// world is what the test stages see: whether the cluster answers, and which stage fails.
type world struct {
	clusterUp bool
	fail      string // the stage that fails
	block     string // the stage that waits for Ctrl-C
	started   chan struct{}
}

type testStage struct {
	name string
	w    *world
}

func (s testStage) Name() string                      { return s.name }
func (s testStage) Summary() string                   { return "test stage " + s.name }
func (s testStage) Inputs(*pipeline.Env) (any, error) { return map[string]string{"stage": s.name}, nil }
func (s testStage) Run(ctx context.Context, env *pipeline.Env) (any, error) {
	switch s.name {
	case s.w.fail:
		return nil, errors.New("the BMC said 401")
	case s.w.block:
		close(s.w.started)
		<-ctx.Done()
		return nil, ctx.Err()
	case stages.NameInstall:
		s.w.clusterUp = true
		return map[string]string{"kubeconfig": filepath.Join(env.WorkDir, "auth", "kubeconfig")}, nil
	}
	return map[string]string{"done": s.name}, nil
}

// installStage verifies as install does: the cluster must answer.
type installStage struct{ testStage }

func (s installStage) Verify(context.Context, *pipeline.Env) error {
	if !s.w.clusterUp {
		return errors.New("ClusterVersion: connection refused")
	}
	return nil
}

func testPipeline(w *world) func(*isoserver.Server) []pipeline.Stage {
	return func(*isoserver.Server) []pipeline.Stage {
		return []pipeline.Stage{testStage{"preflight", w}, testStage{"mirror", w},
			installStage{testStage{stages.NameInstall, w}}, testStage{"handoff", w}}
	}
}

// runWith runs the CLI on the test pipeline; cancel, when set, is called once the blocking stage
// started (Ctrl-C).
func runWith(t *testing.T, w *world, cancel bool, args ...string) (int, string, string) {
	t.Helper()
	return runPipeline(t, testPipeline(w), w, cancel, args...)
}

// runWithPipeline runs the CLI on the stages pipe returns.
func runWithPipeline(t *testing.T, pipe func(*isoserver.Server) []pipeline.Stage, args ...string) (int, string, string) {
	t.Helper()
	return runPipeline(t, pipe, &world{}, false, args...)
}

func runPipeline(t *testing.T, pipe func(*isoserver.Server) []pipeline.Stage, w *world, cancel bool, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	root, g := newRoot(&out, &errb)
	g.pipeline = pipe
	root.SetArgs(args)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	if cancel {
		w.started = make(chan struct{})
		go func() { <-w.started; stop() }()
	}
	jl := &jsonLines{w: &out}
	ran, err := root.ExecuteContextC(withJSONLines(ctx, jl))
	if err != nil {
		errb.WriteString("error: " + err.Error() + "\n")
	}
	if ran != nil && flagValue(ran, "output") == "json" { // as Execute ends -o json
		jl.command = commandName(ran)
		jl.result(err, exitCode(err))
	}
	return exitCode(err), out.String(), errb.String()
}

// TestConsoleSaysOnlyWhatIsTrue drives a new user's second hour through run and status and
// asserts the words: every success sentence printed is one of progress.Verdicts, a stage found
// in the journal is "done earlier (journaled)", the cluster is "ready" only when this command saw
// it answer, and a run that stopped early never says finished or every stage succeeded.
func TestConsoleSaysOnlyWhatIsTrue(t *testing.T) {
	dir := t.TempDir()
	site := writeLabSite(t, dir, "canary-verdict")
	w := &world{}
	steps := []struct {
		name      string
		before    func()
		args      []string
		cancel    bool
		code      int
		want, not []string
	}{
		{"a first run stops early with --until", nil, []string{"run", "--until", "mirror"}, false, exitOK,
			[]string{"done: preflight..mirror succeeded as asked; not run: install, handoff (outside --until mirror)"},
			[]string{"every stage succeeded", "(finished)", "is ready"}},
		{"a failing stage stops the run", func() { w.fail = "handoff" }, []string{"run"}, false, exitFailure,
			[]string{"mirror     done earlier (journaled): finished with the same inputs", "the BMC said 401"},
			[]string{"every stage succeeded", "(finished)", "is ready", "done:"}},
		{"Ctrl-C in handoff", func() { w.fail, w.block = "", "handoff" }, []string{"run"}, true, exitInterrupted,
			[]string{"install    done earlier (journaled): finished with the same inputs; verified", "interrupted"},
			[]string{"every stage succeeded", "(finished)", "is ready", "done:"}},
		{"the whole run, install found done and verified", func() { w.block = "" }, []string{"run"}, false, exitOK,
			[]string{"install    done earlier (journaled): finished with the same inputs; verified",
				"done: every stage succeeded", "The cluster is ready:"}, []string{"(finished)"}},
		{"the cluster is gone: run --from handoff does not ask it", func() { w.clusterUp = false }, []string{"run", "--from", "handoff"}, false, exitOK,
			[]string{"done: handoff succeeded as asked", "The cluster, as install journaled it at", "(not checked now"},
			[]string{"every stage succeeded", "is ready"}},
		{"status checks nothing", nil, []string{"status"}, false, exitOK,
			[]string{"last run: run at", ", succeeded", "The cluster, as install journaled it at"},
			[]string{"is ready", "(finished)"}},
	}
	for _, st := range steps {
		if st.before != nil {
			st.before()
		}
		code, out, errs := runWith(t, w, st.cancel, append(st.args, "-f", site)...)
		all := out + errs
		if code != st.code {
			t.Fatalf("%s: exit %d, want %d\n%s", st.name, code, st.code, all)
		}
		for _, s := range st.want {
			if !strings.Contains(all, s) {
				t.Errorf("%s: the console does not say %q:\n%s", st.name, s, all)
			}
		}
		for _, s := range st.not {
			if strings.Contains(all, s) {
				t.Errorf("%s: the console says %q, which is not true here:\n%s", st.name, s, all)
			}
		}
	}
	// Ctrl-C in a replay: 130 too, and status says how the last run ended, not "finished".
	w.block = "handoff"
	if code, out, errs := runWith(t, w, true, "replay", "handoff", "-f", site); code != exitInterrupted {
		t.Fatalf("Ctrl-C: exit %d, want %d\n%s%s", code, exitInterrupted, out, errs)
	}
	if _, out, _ := runWith(t, w, false, "status", "-f", site); !strings.Contains(out, ", interrupted: ") {
		t.Errorf("status after Ctrl-C does not say interrupted:\n%s", out)
	}
}

// TestVerdictsDocumented keeps the README's table and progress.Verdicts one list.
func TestVerdictsDocumented(t *testing.T) {
	readme := readREADME(t)
	for _, v := range progress.Verdicts() {
		if !strings.Contains(readme, "| `"+v.Says+"` | "+v.Check+" |") {
			t.Errorf("README's verdict table lacks the row for %q (its check: %s)", v.Says, v.Check)
		}
	}
}

func readREADME(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
