//go:build !linux

package agentiso

import "os/exec"

// dieWithParent has no portable equivalent outside Linux; removeAllRetry covers a straggler.
func dieWithParent(*exec.Cmd) {}
