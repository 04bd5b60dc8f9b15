package harness

import (
	"context"
	"path/filepath"

	"github.com/bootstrap-dev/bootstrap/internal/childproc"
)

// startProc starts a lab server (docker-registry, sshd) as a child process, logging to
// <lab>/logs/<name>.log, and waits until addr accepts TCP connections (30 s at most). The lab's
// guard process, not the kernel, stops what a killed lab leaves behind.
func startProc(ctx context.Context, l *Lab, name, addr string, argv ...string) (*childproc.Proc, error) {
	return childproc.Start(ctx, childproc.Spec{Name: name, LogDir: filepath.Join(l.Dir, "logs"), Addr: addr,
		Argv: argv, Hint: "make deps installs it"})
}
