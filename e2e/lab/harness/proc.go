package harness

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// proc is a lab server run as a child process (docker-registry, sshd). Its output goes to
// <lab>/logs/<name>.log so a failing start can be explained.
type proc struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error
}

// startProc starts argv, then waits until addr accepts TCP connections (or the process exits,
// or 30 s pass). On failure the process is stopped and the error quotes the end of its log.
func startProc(ctx context.Context, l *Lab, name, addr string, argv ...string) (*proc, error) {
	if _, err := exec.LookPath(argv[0]); err != nil {
		return nil, fmt.Errorf("%s: %w (make deps installs it)", argv[0], err)
	}
	logs := filepath.Join(l.Dir, "logs")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		return nil, err
	}
	p := &proc{name: name, log: filepath.Join(logs, name+".log"), done: make(chan struct{})}
	f, err := os.OpenFile(p.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p.cmd = exec.Command(argv[0], argv[1:]...)
	p.cmd.Stdout, p.cmd.Stderr = f, f
	// Its own process group: a Ctrl-C at the terminal reaches the lab, which stops it in order.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			return p, nil
		}
		select {
		case <-p.done:
			return nil, fmt.Errorf("%s exited (%v) before listening on %s: %s", argv[0], p.err, addr, p.tail())
		case <-ctx.Done():
			_ = p.stop()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			_ = p.stop()
			return nil, fmt.Errorf("%s not listening on %s after 30s: %s", argv[0], addr, p.tail())
		}
	}
}

// stop sends SIGTERM, then SIGKILL after 5 s, and waits.
func (p *proc) stop() error {
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

// tail returns the last lines of the process log.
func (p *proc) tail() string {
	b, _ := os.ReadFile(p.log)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	return fmt.Sprintf("%s (log %s)", strings.Join(lines, " | "), p.log)
}
