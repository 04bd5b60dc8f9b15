package agentiso

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes the kernel kill cmd when bootstrap dies (kill -9, power loss of the shell):
// an orphaned openshift-install would go on writing into the asset directory that the resumed run
// cleans and builds in.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
