package install_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestWaitForDiesWithBootstrap kills bootstrap (a child running WaitFor on a hanging installer)
// with SIGKILL: the installer must not outlive it, or a resumed run would have two wait-for
// processes polling the cluster.
func TestWaitForDiesWithBootstrap(t *testing.T) {
	bin, assets := installer(t)
	touch(t, filepath.Join(assets, "hang"))
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), "WAITFOR_CHILD_BIN="+bin, "WAITFOR_CHILD_ASSETS="+assets)
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = child.Process.Kill(); _ = child.Wait() }()
	var pid int
	for deadline := time.Now().Add(10 * time.Second); pid == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the installer did not start")
		}
		if b, err := os.ReadFile(filepath.Join(assets, "installer.pid")); err == nil && strings.HasSuffix(string(b), "\n") {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
	}
	t.Cleanup(func() { _ = syscall.Kill(-pid, syscall.SIGKILL) }) // the script's sleep, in its group
	if !alive(pid) {
		t.Fatalf("installer %d is not running before the kill", pid)
	}
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	for deadline := time.Now().Add(5 * time.Second); alive(pid); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("installer %d still runs 5 s after bootstrap was killed", pid)
		}
	}
}

// alive says whether pid runs (a zombie waiting for its new parent to reap it does not).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}
