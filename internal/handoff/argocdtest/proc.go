package argocdtest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// proc is one Argo CD process (or redis); its output goes to <logs>/<name>.log.
type proc struct {
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error
}

// startProc starts argv with env and waits until addr accepts TCP connections (or the process
// exits, or startTimeout passes). On failure the process is stopped and the error quotes the end
// of its log.
func startProc(ctx context.Context, logs, name, addr string, env, argv []string) (*proc, error) {
	if err := os.MkdirAll(logs, 0o755); err != nil {
		return nil, err
	}
	p := &proc{log: filepath.Join(logs, name+".log"), done: make(chan struct{})}
	f, err := os.OpenFile(p.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p.cmd = exec.Command(argv[0], argv[1:]...)
	p.cmd.Stdout, p.cmd.Stderr, p.cmd.Env = f, f, env
	// Its own process group: a Ctrl-C at a terminal reaches the caller, which stops it in order.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	deadline := time.Now().Add(startTimeout)
	for {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			return p, nil
		}
		select {
		case <-p.done:
			return nil, fmt.Errorf("%s exited (%v) before listening on %s: %s", name, p.err, addr, p.tail())
		case <-ctx.Done():
			_ = p.stop()
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			_ = p.stop()
			return nil, fmt.Errorf("%s not listening on %s after %s: %s", name, addr, startTimeout, p.tail())
		}
	}
}

// stop sends SIGTERM, then SIGKILL after 5 s, and waits. An exit by signal is not an error.
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
	return nil
}

// tail returns the last lines of the process's log.
func (p *proc) tail() string {
	b, _ := os.ReadFile(p.log)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	return fmt.Sprintf("%s (log %s)", strings.Join(lines, " | "), p.log)
}
