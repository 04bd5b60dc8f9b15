//go:build linux

package main

import (
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// guardEnv marks the lab process the guard started (so it does not guard itself again).
const guardEnv = "BOOTSTRAP_LAB_GUARDED"

// guard runs the lab as a child and makes every process the lab starts die with it, on any exit
// path: Ctrl-C, SIGTERM, a broken pipe (`make lab | tee` after tee died), a panic or SIGKILL of
// the lab. The lab's servers run in process groups of their own (envtest starts etcd and
// kube-apiserver with Setpgid, the lab its registries and sshd), so a signal to the lab's group
// does not reach them, and a lab that dies without its deferred cleanup leaves them running. The
// guard is a child subreaper (PR_SET_CHILD_SUBREAPER): whatever the lab leaves behind becomes
// the guard's child, and the guard stops each one's process group (SIGTERM, then SIGKILL after
// 10 s). It returns the lab's exit code; ok is false when the guard could not start (the caller
// then runs the lab itself).
func guard(args []string) (code int, ok bool) {
	if os.Getenv(guardEnv) != "" {
		return 0, false
	}
	exe, err := os.Executable()
	if err != nil {
		return 0, false
	}
	return guardExec(exe, args)
}

// guardExec runs exe with args under the guard.
func guardExec(exe string, args []string) (code int, ok bool) {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return 0, false
	}
	// The guard writes nothing but its own last words; a broken pipe must not kill it before it
	// has cleaned up, and Ctrl-C reaches the lab (same process group), which stops in order.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGPIPE)
	defer signal.Stop(sigs)

	cmd := exec.Command(exe, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), guardEnv+"=1")
	// Should the guard itself be killed, the lab gets SIGTERM and stops in order.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		return 0, false
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var werr error
wait:
	for {
		select {
		case werr = <-done:
			break wait
		case s := <-sigs:
			// SIGINT from a terminal already reached the lab; a SIGTERM/SIGHUP sent to the guard alone is passed on.
			if s == syscall.SIGTERM || s == syscall.SIGHUP {
				_ = cmd.Process.Signal(syscall.SIGTERM)
			}
		}
	}
	code = 0
	var ee *exec.ExitError
	if errors.As(werr, &ee) {
		code = ee.ExitCode()
		if code < 0 {
			code = 1 // killed by a signal
		}
	} else if werr != nil {
		code = 1
	}
	if left := reapOrphans(10 * time.Second); left > 0 {
		os.Stderr.WriteString("lab: stopped " + strconv.Itoa(left) + " process(es) the lab left behind\n")
	}
	return code, true
}

// reapOrphans stops every remaining child of this process (the lab's orphans, reparented to the
// subreaper) with its process group: SIGTERM, SIGKILL after grace, and reaps them. It returns how
// many there were.
func reapOrphans(grace time.Duration) int {
	kids := children()
	for _, pid := range kids {
		signalGroup(pid, syscall.SIGTERM)
	}
	deadline := time.Now().Add(grace)
	for len(children()) > 0 {
		reap()
		if time.Now().After(deadline) {
			for _, pid := range children() {
				signalGroup(pid, syscall.SIGKILL)
			}
			deadline = time.Now().Add(grace)
		}
		time.Sleep(50 * time.Millisecond)
		// Grandchildren of a stopped orphan become our children in turn.
		for _, pid := range children() {
			if !contains(kids, pid) {
				kids = append(kids, pid)
				signalGroup(pid, syscall.SIGTERM)
			}
		}
	}
	reap()
	return len(kids)
}

// signalGroup signals pid's process group when pid leads one, else pid alone.
func signalGroup(pid int, sig syscall.Signal) {
	if pgid, err := syscall.Getpgid(pid); err == nil && pgid == pid {
		_ = syscall.Kill(-pid, sig)
		return
	}
	_ = syscall.Kill(pid, sig)
}

// reap collects every exited child without blocking.
func reap() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}

// children lists the live (not zombie) processes whose parent is this process, from /proc.
func children() []int {
	self := os.Getpid()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...; comm may hold spaces and parentheses: parse after the last ')'.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 2 || f[0] == "Z" {
			continue
		}
		if ppid, _ := strconv.Atoi(f[1]); ppid == self {
			out = append(out, pid)
		}
	}
	return out
}

func contains(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
