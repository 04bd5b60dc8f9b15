package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
)

// holdChild runs a pipeline whose only stage blocks, holding the lock until the parent kills it
// or, with interrupt, until SIGINT (as cmd/ wires Ctrl-C) cancels the run.
func holdChild(dir string, interrupt bool) int {
	ctx := context.Background()
	if interrupt {
		var stop context.CancelFunc
		ctx, stop = signal.NotifyContext(ctx, os.Interrupt)
		defer stop()
	}
	r := &pipeline.Runner{WorkDir: dir, Command: "bootstrap run -f hold.yaml", Stages: []pipeline.Stage{
		&funcStage{name: "hold", run: func(ctx context.Context, _ *pipeline.Env) (any, error) {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(time.Minute):
				return nil, nil
			}
		}},
	}}
	if err := r.Run(ctx, pipeline.RunOptions{}); err != nil {
		return 1
	}
	return 0
}

// TestCtrlC interrupts a real run with SIGINT: the stage is journaled as interrupted with a
// remedy, the run records its end, and the lock is released.
func TestCtrlC(t *testing.T) {
	dir := t.TempDir()
	cmd := childCmd(t, "sigint", dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill() //nolint:errcheck // cleanup of a child that may be gone
	waitFor(t, func() bool {
		return pipeline.Fold(mustRead(t, pipeline.JournalPath(dir))).Stage("hold").State == pipeline.StateRunning
	})
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err == nil {
		t.Fatal("interrupted run exited 0")
	}
	r := &pipeline.Runner{WorkDir: dir, Stages: []pipeline.Stage{&funcStage{name: "hold"}}}
	st, err := r.Status()
	if err != nil {
		t.Fatal(err)
	}
	h := st.Stage("hold")
	if h.State != pipeline.StateInterrupted || !strings.HasPrefix(h.Error, "interrupted") || h.Remedy == "" {
		t.Errorf("after Ctrl-C: %+v", h)
	}
	if st.LastRun == nil || !st.LastRun.Ended || st.Lock != nil || st.Chain != "" {
		t.Errorf("run %+v, lock %+v, chain %q: want ended, unlocked, verified", st.LastRun, st.Lock, st.Chain)
	}
}

// TestConcurrentRunLocked starts a real run in a child process and a second one here: the second
// must get *LockedError naming the child. After the child is killed, the lock is provably stale
// and the next run takes it over, saying so in the journal.
func TestConcurrentRunLocked(t *testing.T) {
	dir := t.TempDir()
	cmd := childCmd(t, "hold", dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill() //nolint:errcheck // cleanup of a child that may be gone
	waitFor(t, func() bool {
		st := pipeline.Fold(mustRead(t, pipeline.JournalPath(dir)))
		return st.Stage("hold").State == pipeline.StateRunning
	})

	second := &pipeline.Runner{WorkDir: dir, Stages: []pipeline.Stage{&funcStage{name: "hold"}}}
	err := second.Run(context.Background(), pipeline.RunOptions{})
	var le *pipeline.LockedError
	if !errors.As(err, &le) {
		t.Fatalf("second run: got %v, want *LockedError", err)
	}
	if le.Holder.PID != cmd.Process.Pid || le.Stale {
		t.Fatalf("holder %+v stale %v, want live pid %d", le.Holder, le.Stale, cmd.Process.Pid)
	}
	host, _ := os.Hostname()
	for _, want := range []string{"pid " + strconv.Itoa(cmd.Process.Pid), host, "bootstrap run -f hold.yaml"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	st, err := second.Status()
	if err != nil || st.Lock == nil || st.Lock.PID != cmd.Process.Pid {
		t.Fatalf("status while locked: %v %+v", err, st.Lock)
	}
	if s := st.Stage("hold"); s.State != pipeline.StateRunning {
		t.Errorf("status of a live run: %s, want running", s.State)
	}

	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait() //nolint:errcheck // killed on purpose
	st, _ = second.Status()
	if s := st.Stage("hold"); s.State != pipeline.StateInterrupted || s.Remedy == "" {
		t.Errorf("status after kill: %s (remedy %q), want interrupted with a remedy", s.State, s.Remedy)
	}
	if err := second.Run(context.Background(), pipeline.RunOptions{}); err != nil {
		t.Fatalf("run after the holder died: %v", err)
	}
	found := false
	for _, e := range mustRead(t, pipeline.JournalPath(dir)) {
		if e.Kind == pipeline.EntryWarning && strings.Contains(e.Error, "took over a stale lock") {
			found = true
		}
	}
	if !found {
		t.Error("takeover of the stale lock is not journaled")
	}
	if _, held, _ := pipeline.ReadLock(dir); held {
		t.Error("lock left behind after the run")
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// deadPID returns the pid of a process that has exited and been reaped.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

func TestAcquireLock(t *testing.T) {
	host, _ := os.Hostname()
	bootID, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	tests := []struct {
		name      string
		holder    any // written to the lock file; nil: no lock file
		wantErr   bool
		wantStale bool   // LockedError.Stale
		wantIn    string // in the error text or TookOver
		// journalOpen: this process has the journal open for writing (a live run)
		journalOpen bool
	}{
		{name: "free", holder: nil},
		{name: "live holder on this host", holder: pipeline.LockInfo{Host: host, PID: os.Getppid(), Command: "bootstrap run"},
			wantErr: true, wantIn: "bootstrap run"},
		{name: "dead pid on this host", holder: pipeline.LockInfo{Host: host, PID: deadPID(t)},
			wantIn: "is no longer running"},
		{name: "earlier boot of this host", holder: pipeline.LockInfo{Host: host, PID: os.Getppid(), BootID: "not-" + strings.TrimSpace(string(bootID))},
			wantIn: "rebooted"},
		{name: "pid reused", holder: pipeline.LockInfo{Host: host, PID: os.Getppid(), ProcStart: "1"},
			wantIn: "another process"},
		{name: "other host", holder: pipeline.LockInfo{Host: "jump-2.example", PID: 4242},
			wantErr: true, wantStale: true, wantIn: "remove "},
		// an unreadable lock names no holder; the journal's flock says whether a run is alive
		{name: "unreadable", holder: "garbage", wantIn: "unreadable lock"},
		{name: "empty", holder: "", wantIn: "unexpected end of JSON"},
		{name: "unreadable while a run holds the journal", holder: "garbage", journalOpen: true, wantErr: true, wantIn: "has the journal open"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, pipeline.LockFile)
			switch h := tc.holder.(type) {
			case pipeline.LockInfo:
				data, _ := json.Marshal(h)
				os.WriteFile(path, data, 0o600)
			case string:
				os.WriteFile(path, []byte(h), 0o600)
			}
			if tc.journalOpen {
				j, _, err := pipeline.OpenJournal(pipeline.JournalPath(dir))
				if err != nil {
					t.Fatal(err)
				}
				defer j.Close()
			}
			l, err := pipeline.AcquireLock(dir, "bootstrap run -f site.yaml")
			if tc.wantErr {
				var le *pipeline.LockedError
				if !errors.As(err, &le) {
					t.Fatalf("got %v, want *LockedError", err)
				}
				if le.Stale != tc.wantStale || !strings.Contains(err.Error(), tc.wantIn) {
					t.Fatalf("stale %v, error %q; want stale %v and %q", le.Stale, err, tc.wantStale, tc.wantIn)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(l.TookOver, tc.wantIn) {
				t.Errorf("TookOver %q, want %q", l.TookOver, tc.wantIn)
			}
			if info, held, _ := pipeline.ReadLock(dir); !held || info.PID != os.Getpid() {
				t.Errorf("lock holds %+v, want this process", info)
			}
			if _, err := pipeline.AcquireLock(dir, "again"); err == nil {
				t.Error("a second acquire in a live process succeeded")
			}
			if err := l.Release(); err != nil {
				t.Fatal(err)
			}
			if _, held, _ := pipeline.ReadLock(dir); held {
				t.Error("lock still held after Release")
			}
		})
	}
}
