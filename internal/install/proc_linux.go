package install

import "syscall"

// waitForAttr puts the installer in its own process group (stopped as a whole on cancel or
// timeout) and has the kernel send it SIGTERM when bootstrap dies (kill -9, a closed shell): an
// orphaned wait-for would otherwise go on polling beside the resumed run's own, until its next
// output line met the closed pipe.
func waitForAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
