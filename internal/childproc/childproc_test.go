package childproc

import (
	"context"
	"errors"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A child that listens is up and stops on SIGTERM; one that exits first fails with the end of
// its log; one that never listens fails after Wait; a missing command names the hint.
func TestStart(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Fatal("python3 is needed to play a server")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	port := addr[strings.LastIndex(addr, ":")+1:]
	_ = l.Close()
	dir := t.TempDir()
	ctx := context.Background()

	p, err := Start(ctx, Spec{Name: "up", LogDir: dir, Addr: addr,
		Argv: []string{"python3", "-c", "import socket,time\ns=socket.socket()\ns.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)\ns.bind(('127.0.0.1'," + port + "))\ns.listen()\ntime.sleep(60)"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Stop(); err != nil {
		t.Errorf("stop: %v", err)
	}
	select {
	case <-p.done:
	default:
		t.Error("child still running after Stop")
	}

	// A child that exits after it was up: Done closes, Err says how.
	p, err = Start(ctx, Spec{Name: "crashes", LogDir: dir, Addr: addr,
		Argv: []string{"python3", "-c", "import socket,time\ns=socket.socket()\ns.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)\ns.bind(('127.0.0.1'," + port + "))\ns.listen()\ntime.sleep(60)"}})
	if err != nil {
		t.Fatal(err)
	}
	if p.Err() != nil {
		t.Errorf("Err of a running child: %v", p.Err())
	}
	_ = p.Signal(syscall.SIGKILL)
	<-p.Done()
	var ee *exec.ExitError
	if !errors.As(p.Err(), &ee) || ee.ProcessState.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Errorf("Err of a killed child: %v", p.Err())
	}
	if p.Log() != filepath.Join(dir, "crashes.log") {
		t.Errorf("Log %q", p.Log())
	}

	_, err = Start(ctx, Spec{Name: "dies", LogDir: dir, Addr: addr, Argv: []string{"sh", "-c", "echo bad config at line 3 >&2; exit 2"}})
	if err == nil || !strings.Contains(err.Error(), "exited") || !strings.Contains(err.Error(), "bad config at line 3") {
		t.Errorf("exiting child: %v", err)
	}

	_, err = Start(ctx, Spec{Name: "silent", LogDir: dir, Addr: addr, Argv: []string{"sleep", "30"}, Wait: 300 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "not listening") {
		t.Errorf("silent child: %v", err)
	}

	_, err = Start(ctx, Spec{Name: "missing", LogDir: dir, Addr: addr, Argv: []string{"no-such-server-xyz"}, Hint: "make deps installs it"})
	if err == nil || !strings.Contains(err.Error(), "make deps installs it") {
		t.Errorf("missing command: %v", err)
	}
}
