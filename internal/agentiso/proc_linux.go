package agentiso

import (
	"context"
	"os/exec"

	"github.com/bootstrap-dev/bootstrap/internal/childproc"
)

// installerCommand is exec.CommandContext for openshift-install under childproc's reaper shell:
// in its own process group, the group killed when ctx ends and when bootstrap dies (kill -9
// included), so what the installer started (nmstatectl, an extraction helper) does not go on
// writing into the asset directory the resumed run cleans and builds in. A name that cannot be
// found is run directly, so that its error is exec's own ("executable file not found"), not the
// shell's exit 127.
func installerCommand(ctx context.Context, name string, args ...string) *exec.Cmd {
	path, err := exec.LookPath(name)
	if err != nil {
		return exec.CommandContext(ctx, name, args...)
	}
	return childproc.GroupCommand(ctx, path, args...)
}
