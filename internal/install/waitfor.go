package install

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Targets of `openshift-install agent wait-for`.
const (
	BootstrapComplete = "bootstrap-complete"
	InstallComplete   = "install-complete"
)

// WaitForError is openshift-install ending without success. Tail holds its last lines: the
// installer's own reason when it gives one.
type WaitForError struct {
	Target   string
	ExitCode int
	TimedOut bool
	Tail     []string
}

func (e *WaitForError) Error() string {
	why := fmt.Sprintf("exited %d", e.ExitCode)
	if e.TimedOut {
		why = "did not finish within the profile's timeout"
	}
	msg := fmt.Sprintf("openshift-install agent wait-for %s %s", e.Target, why)
	if len(e.Tail) > 0 {
		msg += "; last output: " + e.Tail[len(e.Tail)-1]
	}
	return msg
}

// WaitFor runs `openshift-install agent wait-for <target> --dir <dir>`, passing every output line
// (stdout and stderr, in order of arrival) to line, and returns nil on success. timeout (0 = none)
// bounds the run: the installer's process group is stopped when it passes or ctx ends.
func WaitFor(ctx context.Context, binary, dir, target string, timeout time.Duration, line func(string)) error {
	if binary == "" {
		binary = "openshift-install"
	}
	rctx, cancel := ctx, context.CancelFunc(func() {})
	if timeout > 0 {
		rctx, cancel = context.WithTimeout(ctx, timeout)
	}
	defer cancel()
	cmd := exec.Command(binary, "agent", "wait-for", target, "--dir", dir, "--log-level", "info")
	cmd.SysProcAttr = waitForAttr()
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("openshift-install: %w", err)
	}
	var tail []string
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			l := strings.TrimRight(sc.Text(), "\r")
			tail = append(tail, l)
			if len(tail) > 20 {
				tail = tail[1:]
			}
			if line != nil {
				line(l)
			}
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait(); pw.Close() }()
	var err error
	select {
	case err = <-done:
	case <-rctx.Done():
		// The installer only polls; stopping its whole group is safe.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case err = <-done:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			err = <-done
		}
	}
	wg.Wait()
	if rctx.Err() != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("openshift-install agent wait-for %s: %w", target, ctx.Err())
		}
		return &WaitForError{Target: target, TimedOut: true, ExitCode: -1, Tail: tail}
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return &WaitForError{Target: target, ExitCode: ee.ExitCode(), Tail: tail}
	}
	if err != nil {
		return fmt.Errorf("openshift-install agent wait-for %s: %w", target, err)
	}
	return nil
}
