package agentiso

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
)

// reaperParentEnv ("build|bare DIR") makes the test binary a stand-in for bootstrap. In build
// mode it runs Build with DIR/openshift-install, a script whose `agent create image` starts a
// child of its own (the stand-in for a helper the installer runs, a grandchild of bootstrap)
// that writes its pid to DIR/grandchild.pid and sleeps; in bare mode it runs the same script
// the way Build did before (Pdeathsig on the direct child only), the negative control.
const reaperParentEnv = "AGENTISO_TEST_REAPER_PARENT"

const installerScript = `#!/bin/sh
case "$1" in
version) echo "openshift-install 4.16.3"; exit 0 ;;
esac
sleep 300 &
echo $! > "$(dirname "$0")/grandchild.pid"
wait
`

func TestMain(m *testing.M) {
	if v := os.Getenv(reaperParentEnv); v != "" {
		reaperParent(v)
	}
	os.Exit(m.Run())
}

func reaperParent(v string) {
	mode, dir, _ := strings.Cut(v, " ")
	installer := filepath.Join(dir, "openshift-install")
	if mode == "bare" {
		cmd := exec.Command(installer, "agent", "create", "image")
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			os.Exit(2)
		}
		// Blocks in wait4 until the test kills this process (the script waits 300 s). Not
		// select {}: without cgo the runtime calls that a deadlock and exits 2.
		_ = cmd.Wait()
		os.Exit(4)
	}
	_, _ = Build(context.Background(), BuildOptions{WorkDir: filepath.Join(dir, "work"), Rendered: &Rendered{}, Installer: installer})
	os.Exit(3) // Build returned: the installer was not left running, the test fails
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

// grandchildAfterKill starts the stand-in in mode, waits for the installer's child, kills the
// stand-in with SIGKILL and reports whether that child still runs 5 s later (its pid, to clean up).
func grandchildAfterKill(t *testing.T, mode string) (int, bool) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "openshift-install"), []byte(installerScript), 0o755); err != nil {
		t.Fatal(err)
	}
	parent := exec.Command(exe, "-test.run=^$")
	parent.Env = append(os.Environ(), reaperParentEnv+"="+mode+" "+dir)
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	var pid int
	for i := 0; i < 300 && pid == 0; i++ {
		b, _ := os.ReadFile(filepath.Join(dir, "grandchild.pid"))
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		time.Sleep(100 * time.Millisecond)
	}
	if pid == 0 {
		_ = parent.Process.Kill()
		st, _ := parent.Process.Wait()
		t.Fatalf("%s: the installer's child never started (parent: %v)", mode, st)
	}
	if err := parent.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = parent.Wait()
	for i := 0; i < 50 && alive(pid); i++ {
		time.Sleep(100 * time.Millisecond)
	}
	return pid, alive(pid)
}

// TestInstallerDiesWithBootstrap: bootstrap killed -9 while openshift-install runs a child of its
// own. Run as before (Pdeathsig on openshift-install alone) the child outlives bootstrap (the
// negative control: the test can see an orphan); run by Build, the whole group dies with it.
func TestInstallerDiesWithBootstrap(t *testing.T) {
	pid, orphan := grandchildAfterKill(t, "bare")
	if orphan {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	} else {
		t.Fatal("negative control: the installer's child died with the parent, so this test cannot see an orphan")
	}
	pid, orphan = grandchildAfterKill(t, "build")
	if orphan {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("the installer's child %d still runs 5 s after bootstrap was killed -9", pid)
	}
}
