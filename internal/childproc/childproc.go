// Package childproc runs a local server as a child process and waits until it listens: the lab's
// stand-ins (docker-registry, sshd) and Argo CD's controllers with redis in the handoff tests and
// the lab. Output goes to a log file whose end is quoted when a start fails; each child has its
// own process group, so a Ctrl-C at a terminal reaches the caller, which stops them in order.
// GroupCommand (group.go) runs a short-lived command (git, openshift-install) so that it and
// whatever it starts die with the caller.
package childproc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/fsroot"
	"github.com/bootstrap-dev/bootstrap/internal/poll"
)

// Spec says what to start and how to know it is up.
type Spec struct {
	Name   string        // names the log (<LogDir>/<Name>.log) and the errors
	LogDir string        // created if missing
	Addr   string        // the TCP address the child listens on once it is ready
	Argv   []string      // the command; Argv[0] is looked up on PATH
	Env    []string      // nil: the caller's environment
	Wait   time.Duration // how long the start may take; 0: 30 s
	// DieWithParent kills the child when the caller dies (Linux Pdeathsig), for callers with no
	// guard process of their own.
	DieWithParent bool
	// Hint follows the error when Argv[0] is not found ("make deps installs it").
	Hint string
}

// Proc is a started child.
type Proc struct {
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error
}

// Start starts s.Argv and waits until s.Addr accepts TCP connections, the child exits, ctx ends
// or s.Wait passes. On failure the child is stopped and the error quotes the end of its log.
func Start(ctx context.Context, s Spec) (*Proc, error) {
	if _, err := exec.LookPath(s.Argv[0]); err != nil {
		if s.Hint != "" {
			return nil, fmt.Errorf("%s: %w (%s)", s.Argv[0], err, s.Hint)
		}
		return nil, fmt.Errorf("%s: %w", s.Argv[0], err)
	}
	if s.Wait == 0 {
		s.Wait = 30 * time.Second
	}
	if err := os.MkdirAll(s.LogDir, 0o755); err != nil {
		return nil, err
	}
	p := &Proc{log: filepath.Join(s.LogDir, s.Name+".log"), done: make(chan struct{})}
	f, err := os.OpenFile(p.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p.cmd = exec.Command(s.Argv[0], s.Argv[1:]...)
	p.cmd.Stdout, p.cmd.Stderr, p.cmd.Env = f, f, s.Env
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if s.DieWithParent {
		p.cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	}
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", s.Name, err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	err = poll.Until(ctx, poll.Every{Interval: 50 * time.Millisecond, Timeout: s.Wait}, func(context.Context) (bool, error) {
		select {
		case <-p.done:
			return false, fmt.Errorf("%s exited (%v) before listening on %s: %s", s.Name, p.err, s.Addr, p.Tail())
		default:
		}
		c, err := net.DialTimeout("tcp", s.Addr, 200*time.Millisecond)
		if err != nil {
			return false, nil
		}
		c.Close()
		return true, nil
	})
	switch {
	case err == nil:
		return p, nil
	case errors.Is(err, poll.ErrTimeout):
		_ = p.Stop()
		return nil, fmt.Errorf("%s not listening on %s after %s: %s", s.Name, s.Addr, s.Wait, p.Tail())
	case ctx.Err() != nil:
		_ = p.Stop()
		return nil, ctx.Err()
	}
	return nil, err
}

// Stop sends SIGTERM, then SIGKILL after 5 s, and waits. An exit by a signal or with a status is
// not an error; only a failure to wait for the child is.
func (p *Proc) Stop() error {
	select {
	case <-p.done:
		return nil
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
	var ee *exec.ExitError
	if p.err != nil && !errors.As(p.err, &ee) {
		return p.err
	}
	return nil
}

// Done is closed when the child has exited; Err then says how (nil for a clean exit).
func (p *Proc) Done() <-chan struct{} { return p.done }

// Err is the child's exit error once Done is closed.
func (p *Proc) Err() error {
	select {
	case <-p.done:
		return p.err
	default:
		return nil
	}
}

// Signal sends sig to the child.
func (p *Proc) Signal(sig os.Signal) error { return p.cmd.Process.Signal(sig) }

// Log is the child's log file.
func (p *Proc) Log() string { return p.log }

// Tail returns the last five lines of the child's log and the log's path.
func (p *Proc) Tail() string {
	b := logTail(p.log, 64<<10)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	return fmt.Sprintf("%s (log %s)", strings.Join(lines, " | "), p.log)
}

// logTail is at most the last n bytes of the log at path: a child that wrote gigabytes costs no
// more to describe than one that wrote a line. The log is opened through the safe opener (a
// regular file only: a FIFO put in its place cannot block).
func logTail(path string, n int64) []byte {
	f, err := fsroot.OpenFile(path, fsroot.Stream)
	if err != nil {
		return nil
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > n {
		if _, err := f.Seek(fi.Size()-n, io.SeekStart); err != nil {
			return nil
		}
	}
	b, _ := io.ReadAll(io.LimitReader(f, n))
	return b
}
