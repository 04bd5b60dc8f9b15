package childproc

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// reaper runs "$0" "$@" in the background of a shell that is the leader of its own process group
// and, on SIGTERM, kills that whole group; otherwise it exits with the command's status. The
// kernel's parent-death signal reaches only a direct child (it is cleared across fork), so a
// command run directly would die with us and leave what it started behind (git's
// git-remote-https or ssh blocked on the network, openshift-install's helpers writing into an
// asset directory a resumed run cleans); the shell receives the signal and takes the group with
// it. fd 3 hands the command the shell's standard input, which a background job would otherwise
// lose to /dev/null.
const reaper = `exec 3<&0; trap 'kill -KILL 0' TERM; "$0" "$@" <&3 3<&- & wait $!`

// GroupCommand is exec.CommandContext with the command under the reaper shell in its own process
// group: the group is killed when ctx ends and when this process dies (kill -9 included).
func GroupCommand(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "/bin/sh", append([]string{"-c", reaper, name}, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	cmd.Cancel = func() error { return KillGroup(cmd) }
	return cmd
}

// KillGroup kills a started command's process group (its children and theirs).
func KillGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return os.ErrProcessDone
	}
	return err
}
