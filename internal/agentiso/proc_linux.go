package agentiso

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// reaper runs "$0" "$@" in the background of a shell that is the leader of its own process
// group and, on SIGTERM, kills that whole group. The kernel sends the shell SIGTERM when
// bootstrap dies (Pdeathsig reaches only a direct child): openshift-install and whatever it
// started (nmstatectl, an extraction helper) then die with bootstrap instead of going on writing
// into the asset directory the resumed run cleans and builds in. fd 3 hands the command the
// shell's standard input, which a background job would otherwise lose to /dev/null. The same
// shell as gitrepo's (internal/gitrepo/private.go), for the same reason.
const reaper = `exec 3<&0; trap 'kill -KILL 0' TERM; "$0" "$@" <&3 3<&- & wait $!`

// installerCommand is exec.CommandContext for openshift-install: in its own process group under
// the reaper shell, the group killed when ctx ends and when bootstrap dies (kill -9 included).
// A name that cannot be found is run directly, so that its error is exec's own ("executable
// file not found"), not the shell's exit 127.
func installerCommand(ctx context.Context, name string, args ...string) *exec.Cmd {
	path, err := exec.LookPath(name)
	if err != nil {
		return exec.CommandContext(ctx, name, args...)
	}
	cmd := exec.CommandContext(ctx, "/bin/sh", append([]string{"-c", reaper, path}, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		if errors.Is(err, syscall.ESRCH) {
			return os.ErrProcessDone
		}
		return err
	}
	return cmd
}
