//go:build !linux

package install

import "syscall"

// waitForAttr: no parent-death signal outside Linux; an orphaned wait-for stops at its next
// output line (SIGPIPE) and the resumed run starts its own.
func waitForAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
