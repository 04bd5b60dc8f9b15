//go:build !linux

package agentiso

import (
	"context"
	"os/exec"
)

// installerCommand has no portable parent-death signal outside Linux; removeAllRetry covers a
// straggler.
func installerCommand(ctx context.Context, name string, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, name, args...)
}
