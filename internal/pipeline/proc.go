package pipeline

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// pidAlive reports whether pid is a running process on this host. A zombie (exited, not yet
// reaped) counts as dead; a process of another user (EPERM) counts as alive.
func pidAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	if errors.Is(err, syscall.ESRCH) {
		return false
	}
	if state, ok := procField(pid, 3); ok && state == "Z" {
		return false
	}
	return true
}

// procStart returns the process start time in clock ticks since boot (Linux /proc/PID/stat
// field 22), or "" where /proc is unavailable.
func procStart(pid int) string {
	v, _ := procField(pid, 22)
	return v
}

// procField returns field n (1-based, as in proc(5)) of /proc/PID/stat.
func procField(pid int, n int) (string, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", false
	}
	s := string(data)
	// The command name (field 2) is in parentheses and may hold spaces; fields resume after ')'.
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return "", false
	}
	fields := strings.Fields(s[i+1:])
	idx := n - 3
	if idx < 0 || idx >= len(fields) {
		return "", false
	}
	return fields[idx], true
}

// bootID identifies the current boot of this host (Linux), or "".
func bootID() string {
	data, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(data))
}
