package gitrepo

import (
	"context"
	"os/exec"
	"syscall"
)

// GroupCommand is groupCommand, for the kill -9 test in package gitrepo_test.
var GroupCommand = groupCommand

// BareCommand is what groupCommand would be without the reaper shell: its own process group and
// a parent-death signal for the direct child only. The orphan test runs it as its negative
// control, to show that it can see an orphan at all.
func BareCommand(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	return cmd
}
