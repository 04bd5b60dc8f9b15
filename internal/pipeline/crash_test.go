package pipeline_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
)

// The crash test re-executes the test binary as a child that runs a real pipeline; these
// environment variables select the child's role.
const (
	childEnv     = "PIPELINE_TEST_CHILD" // "crash" or "hold"
	childDirEnv  = "PIPELINE_TEST_DIR"
	crashSteps   = 1000
	crashWorkers = 4
)

func TestMain(m *testing.M) {
	switch os.Getenv(childEnv) {
	case "crash":
		os.Exit(crashChild(os.Getenv(childDirEnv)))
	case "hold":
		os.Exit(holdChild(os.Getenv(childDirEnv), false))
	case "sigint":
		os.Exit(holdChild(os.Getenv(childDirEnv), true))
	}
	os.Exit(m.Run())
}

// workStage journals crashSteps steps with crashWorkers goroutines. Before recording a step it
// appends the step key to side (the proof of execution), so a step that runs although journaled
// as done shows up there.
type workStage struct{ side string }

func (workStage) Name() string                      { return "work" }
func (workStage) Summary() string                   { return "1,000 journaled steps" }
func (workStage) Inputs(*pipeline.Env) (any, error) { return map[string]int{"steps": crashSteps}, nil }
func (w workStage) Run(ctx context.Context, env *pipeline.Env) (any, error) {
	side, err := os.OpenFile(w.side, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	defer side.Close()
	keys := make(chan string)
	errs := make(chan error, crashWorkers)
	var wg sync.WaitGroup
	for range crashWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range keys {
				time.Sleep(time.Millisecond) // a little work, so kills land mid-stage
				if _, err := side.Write([]byte(k + "\n")); err != nil {
					errs <- err
					return
				}
				if err := env.Steps.Record(k, map[string]string{"item": k}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	skipped := 0
	for i := range crashSteps {
		k := fmt.Sprintf("item-%04d", i)
		if env.Steps.Done(k, nil) {
			skipped++
			continue
		}
		keys <- k
	}
	close(keys)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return nil, err
	}
	return map[string]int{"items": crashSteps}, nil
}

// funcStage is a stage made of functions, for tests.
type funcStage struct {
	name   string
	inputs func(*pipeline.Env) (any, error)
	run    func(context.Context, *pipeline.Env) (any, error)
	verify func(context.Context, *pipeline.Env) error
}

func (s *funcStage) Name() string    { return s.name }
func (s *funcStage) Summary() string { return "test stage " + s.name }
func (s *funcStage) Inputs(env *pipeline.Env) (any, error) {
	if s.inputs == nil {
		return s.name, nil
	}
	return s.inputs(env)
}
func (s *funcStage) Run(ctx context.Context, env *pipeline.Env) (any, error) {
	if s.run == nil {
		return map[string]string{"stage": s.name}, nil
	}
	return s.run(ctx, env)
}

func crashChild(dir string) int {
	r := &pipeline.Runner{WorkDir: filepath.Join(dir, "work"), Command: "crash-child", Stages: []pipeline.Stage{
		&funcStage{name: "prep"},
		workStage{side: filepath.Join(dir, "side.log")},
		&funcStage{name: "seal"},
	}}
	if err := r.Run(context.Background(), pipeline.RunOptions{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		var le *pipeline.LockedError
		if errors.As(err, &le) {
			return 4
		}
		return 1
	}
	return 0
}

func childCmd(t *testing.T, role, dir string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+role, childDirEnv+"="+dir)
	cmd.Stderr = os.Stderr
	return cmd
}

// doneSteps is the set of work steps journaled as done in the current attempt.
func doneSteps(t *testing.T, path string) map[string]bool {
	t.Helper()
	entries, _, err := pipeline.ReadJournal(path)
	if err != nil {
		t.Fatalf("read journal: %v", err)
	}
	attempt := 0
	for _, e := range entries {
		if e.Kind == pipeline.EntryStageStarted && e.Stage == "work" {
			attempt = e.Attempt
		}
	}
	done := map[string]bool{}
	for _, e := range entries {
		if e.Kind == pipeline.EntryStepDone && e.Stage == "work" && e.Attempt == attempt {
			done[e.Step] = true
		}
	}
	return done
}

// sideSince returns the step keys appended to the side file after offset, and the new offset.
func sideSince(t *testing.T, path string, off int64) ([]string, int64) {
	t.Helper()
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, 0
	}
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	sc := bufio.NewScanner(strings.NewReader(string(data[off:])))
	for sc.Scan() {
		keys = append(keys, sc.Text())
	}
	return keys, int64(len(data))
}

// TestCrashResume runs, for several seeds, a child with 1,000 journaled steps and kills it with
// SIGKILL at random moments until a run finishes on its own. After every kill it checks that no
// step journaled as done ran again and that the hash chain verifies; every third kill it also
// tears the journal's last line, which the next run must tolerate. The finished pipeline must
// hold every step, and one more run must do nothing.
func TestCrashResume(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test re-executes the test binary many times")
	}
	// Calibrate: a whole uninterrupted run, so kill moments spread over a run on any machine
	// (the race detector makes everything several times slower).
	t0 := time.Now()
	if err := childCmd(t, "crash", t.TempDir()).Run(); err != nil {
		t.Fatalf("calibration run: %v", err)
	}
	full := time.Since(t0)
	start := time.Now()
	kills, torn := 0, 0
	for seed := uint64(1); kills < 24; seed++ {
		k, tt := crashSeed(t, seed, full)
		kills += k
		torn += tt
	}
	t.Logf("%d SIGKILLs, %d torn tails, kill moments within %v; %v",
		kills, torn, (full / 2).Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
}

// crashSeed runs one seed in a fresh work dir: 5 to 8 runs killed at a random moment within
// half of full (a whole run's duration), then a run that must finish. It returns the kills and the torn
// tails it caused.
func crashSeed(t *testing.T, seed uint64, full time.Duration) (kills, torn int) {
	dir := t.TempDir()
	journal := filepath.Join(dir, "work", pipeline.JournalFile)
	side := filepath.Join(dir, "side.log")
	rng := rand.New(rand.NewPCG(seed, 0xb007))
	target := 5 + rng.IntN(4)
	var off int64
	check := func(done map[string]bool, what string) {
		keys, next := sideSince(t, side, off)
		off = next
		for _, k := range keys {
			if done[k] {
				t.Fatalf("seed %d: %s: step %s ran again although journaled as done", seed, what, k)
			}
		}
		if err := pipeline.VerifyChain(journal); err != nil {
			t.Fatalf("seed %d: %s: chain: %v", seed, what, err)
		}
	}
	for round := 1; ; round++ {
		if round > 30 {
			t.Fatalf("seed %d: no run finished in 30 rounds", seed)
		}
		done := doneSteps(t, journal)
		cmd := childCmd(t, "crash", dir)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		delay := time.Duration(rng.Int64N(int64(full / 2)))
		if kills >= target {
			delay = time.Hour // this run must finish on its own
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		select {
		case err := <-exited:
			if err != nil {
				t.Fatalf("seed %d round %d: child failed: %v", seed, round, err)
			}
			check(done, fmt.Sprintf("round %d (finished)", round))
			if n := len(doneSteps(t, journal)); n != crashSteps {
				t.Fatalf("seed %d: journal has %d of %d steps done", seed, n, crashSteps)
			}
			idempotent(t, dir, side, off)
			return kills, torn
		case <-time.After(delay):
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
				t.Fatal(err)
			}
			<-exited
			kills++
		}
		check(done, fmt.Sprintf("round %d (killed after %v)", round, delay))
		if kills%3 == 0 {
			tearTail(t, journal, rng)
			torn++
			if _, warnings, err := pipeline.ReadJournal(journal); err != nil || len(warnings) == 0 {
				t.Fatalf("seed %d: torn tail: err %v, warnings %v", seed, err, warnings)
			}
			if err := pipeline.VerifyChain(journal); err != nil {
				t.Fatalf("seed %d: torn tail breaks the chain: %v", seed, err)
			}
		}
	}
}

// idempotent runs a finished pipeline again: every stage must be skipped and no step executed.
func idempotent(t *testing.T, dir, side string, off int64) {
	t.Helper()
	if err := childCmd(t, "crash", dir).Run(); err != nil {
		t.Fatalf("run after finish: %v", err)
	}
	if keys, _ := sideSince(t, side, off); len(keys) != 0 {
		t.Fatalf("a finished pipeline ran %d steps again", len(keys))
	}
	st := pipeline.Fold(mustRead(t, filepath.Join(dir, "work", pipeline.JournalFile)))
	for _, name := range []string{"prep", "work", "seal"} {
		if s := st.Stage(name); s.State != pipeline.StateSucceeded || !s.Skipped {
			t.Errorf("stage %s: state %s skipped %v, want succeeded and skipped", name, s.State, s.Skipped)
		}
	}
}

// tearTail simulates a write cut short by power loss: either a partial new line is appended, or
// the last line loses its end (an entry that was never acknowledged).
func tearTail(t *testing.T, path string, rng *rand.Rand) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if rng.IntN(2) == 0 || len(data) < 2 {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(`{"seq":99999,"time":"2026-01-01T00:00:00Z","kind":"step-do`); err != nil {
			t.Fatal(err)
		}
		return
	}
	// the last line was being appended: its witness is still pending (see journal_head.go)
	if err := pipeline.PendingWitness(path); err != nil {
		t.Fatal(err)
	}
	lastStart := strings.LastIndexByte(string(data[:len(data)-1]), '\n') + 1
	cut := lastStart + 1 + rng.IntN(len(data)-1-lastStart)
	if err := os.Truncate(path, int64(cut)); err != nil {
		t.Fatal(err)
	}
}

func mustRead(t *testing.T, path string) []pipeline.Entry {
	t.Helper()
	entries, _, err := pipeline.ReadJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	return entries
}
