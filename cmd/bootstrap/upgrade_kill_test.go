package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/cluster/clustertest"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade/upgradetest"
)

// upgradeChildEnv holds the arguments of `bootstrap` for the re-executed test binary.
const upgradeChildEnv = "BOOTSTRAP_UPGRADE_CHILD_ARGS"

// TestUpgradeChild is bootstrap itself when the test binary is re-executed by
// TestUpgradeRunKilledBetweenDesiredUpdateAndJournal; otherwise it returns at once.
func TestUpgradeChild(t *testing.T) {
	raw := os.Getenv(upgradeChildEnv)
	if raw == "" {
		return
	}
	var args []string
	if err := json.Unmarshal([]byte(raw), &args); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(99)
	}
	os.Exit(Execute(args, os.Stdin, os.Stdout, os.Stderr))
}

// Two minors, each killed with SIGKILL after its spec.desiredUpdate reached the API server and
// before `upgrade run` heard back (so before the journal write): each resumed process takes the
// dead one's lock over, finds the write in the cluster, journals it without writing it again,
// and goes on. A tap in front of the API server counts the writes: exactly one per hop.
func TestUpgradeRunKilledBetweenDesiredUpdateAndJournal(t *testing.T) {
	var srv clustertest.Server
	t.Cleanup(srv.Stop)
	cfg := srv.Config(t)
	d := clustertest.Dynamic(t, cfg)
	clock := &upgradetest.Clock{Factor: 1200}
	upgradetest.Lab(t, d, upgradetest.LabOptions{Version: "4.17.10", Workers: []string{"w0", "w1"}}, clock)
	sim := &upgradetest.Sim{D: d, Clock: clock}
	sim.Start(t)
	sim.Settle(t)
	tap := upgradetest.NewTap(t, cfg)
	var child atomic.Int64
	tap.OnDesired = func(version string, n int) {
		if n == 1 { // the first write of each hop: kill the writer before it hears back
			_ = syscall.Kill(int(child.Load()), syscall.SIGKILL)
		}
	}

	dir := t.TempDir()
	kc := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kc, tap.Kubeconfig(), 0o600); err != nil {
		t.Fatal(err)
	}
	hops := []upgrade.Hop{{From: "4.17.10", To: "4.18.5", Payload: upgradetest.Payload("4.18.5")},
		{From: "4.18.5", To: "4.19.2", Payload: upgradetest.Payload("4.19.2")}}
	plan, _ := json.Marshal(upgrade.Plan{From: "4.17.10", To: "4.19.2", Hops: hops})
	pf := filepath.Join(dir, "plan.json")
	if err := os.WriteFile(pf, plan, 0o644); err != nil {
		t.Fatal(err)
	}
	args, _ := json.Marshal([]string{"--dir", filepath.Join(dir, ".bootstrap"), "upgrade", "run", "--plan", pf, "--kubeconfig", kc,
		"--soak", "0s", "--poll", "50ms", "--accept-rollback-contract", "Jane Doe", "--no-etcd-backup", "the lab has no etcd"})
	run := func() (bool, int, string) { return runUpgradeChild(t, args, &child) }

	for i, h := range hops {
		killed, code, out := run()
		if !killed {
			t.Fatalf("run %d: exit %d, want SIGKILL at hop %s's desiredUpdate\n%s", i+1, code, h.To, out)
		}
		if n := tap.Writes(h.To); n != 1 {
			t.Fatalf("run %d: %d desiredUpdate writes for %s before the kill, want 1", i+1, n, h.To)
		}
	}
	killed, code, out := run()
	if killed || code != 0 {
		t.Fatalf("third run: killed %v exit %d\n%s", killed, code, out)
	}
	t.Logf("third run:\n%s", out)
	for _, h := range hops {
		if n := tap.Writes(h.To); n != 1 {
			t.Errorf("ClusterVersion spec.desiredUpdate written %d times for %s, want exactly once", n, h.To)
		}
	}
	j, err := os.ReadFile(filepath.Join(dir, ".bootstrap", "upgrade", "journal.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		s string
		n int
	}{{`"step":"4.18.5/desired-update-intent"`, 1}, {`"step":"4.18.5/desired-update"`, 1}, {`"step":"4.19.2/desired-update-intent"`, 1},
		{`"step":"4.19.2/desired-update"`, 1}, {`not set twice`, 2}, {`"step":"4.18.5/close"`, 1}, {`"step":"4.19.2/close"`, 1}} {
		if got := bytes.Count(j, []byte(tc.s)); got != tc.n {
			t.Errorf("journal holds %s %d times, want %d", tc.s, got, tc.n)
		}
	}
}

// runUpgradeChild runs `bootstrap` with args (JSON) in a child process (TestUpgradeChild), its pid
// in child for the test's tap to kill: whether SIGKILL ended it, its exit code otherwise (-1 for
// another signal), and its output.
func runUpgradeChild(t *testing.T, args []byte, child *atomic.Int64) (killed bool, code int, out string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestUpgradeChild$")
	cmd.Env = append(os.Environ(), upgradeChildEnv+"="+string(args))
	var b bytes.Buffer
	cmd.Stdout, cmd.Stderr = &b, &b
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	child.Store(int64(cmd.Process.Pid))
	err := cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return ws.Signal() == syscall.SIGKILL, -1, b.String()
		}
		return false, ee.ExitCode(), b.String()
	}
	return false, 0, b.String()
}
