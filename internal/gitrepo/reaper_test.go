package gitrepo_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/gitrepo"
)

// reaperChildEnv ("group|bare PIDFILE") makes the test binary a stand-in for bootstrap: it starts
// a shell whose own child (the stand-in for git-remote-https, a grandchild of bootstrap) writes
// its pid to PIDFILE and sleeps, then blocks until it is killed.
const reaperChildEnv = "GITREPO_TEST_REAPER_CHILD"

func reaperChild(v string) {
	mode, pidFile, _ := strings.Cut(v, " ")
	start := gitrepo.GroupCommand
	if mode == "bare" {
		start = gitrepo.BareCommand
	}
	cmd := start(context.Background(), "/bin/sh", "-c", `sleep 300 & echo $! > "$0"; wait`, pidFile)
	if err := cmd.Start(); err != nil {
		os.Exit(2)
	}
	// Blocks in wait4 until the test kills this process (the shell waits 300 s). Not select {}:
	// without cgo the runtime calls that a deadlock and exits 2.
	_ = cmd.Wait()
	os.Exit(4)
}

// alive reports whether pid runs (a zombie waiting for init to reap it does not).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z' && s[i+2] != 'X'
	}
	return true
}

// grandchildAfterKill starts the stand-in in mode, waits for its grandchild, kills the stand-in
// with SIGKILL and reports whether the grandchild still runs 5 s later (its pid, to clean up).
func grandchildAfterKill(t *testing.T, mode string) (int, bool) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(t.TempDir(), "grandchild.pid")
	child := exec.Command(exe, "-test.run=^$")
	child.Env = append(os.Environ(), reaperChildEnv+"="+mode+" "+pidFile)
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	var pid int
	waitFor(t, "the grandchild's pid", func() bool {
		b, _ := os.ReadFile(pidFile)
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return pid > 0
	})
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	for i := 0; i < 50 && alive(pid); i++ {
		time.Sleep(100 * time.Millisecond)
	}
	return pid, alive(pid)
}

// TestReaperKillsGrandchildrenWithTheParent: bootstrap killed -9 while git's own child (its
// transport helper) runs. Without the reaper shell the grandchild outlives bootstrap (the
// negative control: the test can see an orphan); with it, the whole group dies with bootstrap.
func TestReaperKillsGrandchildrenWithTheParent(t *testing.T) {
	pid, orphan := grandchildAfterKill(t, "bare")
	if orphan {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	} else {
		t.Fatal("negative control: the grandchild of a bare command died with the parent, so this test cannot see an orphan")
	}
	pid, orphan = grandchildAfterKill(t, "group")
	if orphan {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("grandchild %d still runs 5 s after the parent was killed -9", pid)
	}
}
