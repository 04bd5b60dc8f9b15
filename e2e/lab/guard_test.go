//go:build linux

package main

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

// TestGuardStopsWhatTheLabLeaves: a lab that starts a server in a process group of its own and
// then dies by SIGKILL (no cleanup runs) leaves nothing behind under the guard. The guard runs in
// a child test process, as the lab's main does, so this test binary does not become a subreaper.
func TestGuardStopsWhatTheLabLeaves(t *testing.T) {
	if dir := os.Getenv("GUARD_TEST_DIR"); dir != "" {
		script := `setsid sleep 300 & echo $! > ` + filepath.Join(dir, "pid") + `; sleep 0.2; kill -9 $$`
		code, ok := guardExec("/bin/sh", []string{"-c", script})
		if !ok || code == 0 {
			os.Exit(99)
		}
		os.Exit(7)
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestGuardStopsWhatTheLabLeaves$")
	cmd.Env = append(os.Environ(), "GUARD_TEST_DIR="+dir)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 7 {
		t.Fatalf("guard helper: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "stopped 1 process(es) the lab left behind") {
		t.Errorf("guard did not say what it stopped:\n%s", out)
	}
	b, err := os.ReadFile(filepath.Join(dir, "pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	// The orphan was the guard's child and was reaped when the guard ended: it is gone, not a zombie.
	deadline := time.Now().Add(5 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the lab's server (pid %d) outlived the lab", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
