package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/bootstrap-dev/bootstrap/internal/childproc"
)

// Git's private configuration holds the credentials in a file (git-credential-store), so where it
// lives and how long matters: under the caller's work dir (Repo.Dir, 0700), never in a shared
// /tmp; one folder per Prove named after the process ("prove-PID-*"), removed on every return
// path; and a folder whose process is gone (a kill -9 during a check) is removed, with any git
// processes still working in it killed, at the next Prove. Every git command runs in its own
// process group, and the whole group is killed when the command's context ends, so no
// git-remote-https or ssh outlives the check.

// privateRoot is where the private folders of Prove live for a work dir.
func privateRoot(dir string) string {
	if dir == "" {
		return os.TempDir()
	}
	return filepath.Join(dir, "git")
}

// privateDir creates Prove's private folder beneath root, after clearing stale ones.
func privateDir(root string) (string, error) {
	// The shared temporary directory (no work dir given) is never made private itself: as root
	// that would turn /tmp to 0700 for every other user of the machine. The folder MkdirTemp
	// creates in it is 0700 already.
	if root != os.TempDir() {
		if err := os.MkdirAll(root, 0o700); err != nil {
			return "", err
		}
		if err := os.Chmod(root, 0o700); err != nil {
			return "", err
		}
	}
	cleanStale(root)
	return os.MkdirTemp(root, fmt.Sprintf("%s%d-", privatePrefix, os.Getpid()))
}

const privatePrefix = "bootstrap-git-prove-"

// cleanStale removes the private folders under root whose process is gone, first killing any
// process still working in one (git-remote-https left behind by a killed bootstrap).
func cleanStale(root string) {
	ents, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), privatePrefix)
		if !ok || !e.IsDir() {
			continue
		}
		pidText, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid == os.Getpid() || alive(pid) {
			continue
		}
		dir := filepath.Join(root, e.Name())
		killWorkingIn(dir)
		_ = os.RemoveAll(dir)
	}
}

func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// killWorkingIn kills every process whose working directory is dir or beneath it (git commands
// run there; their children inherit it).
func killWorkingIn(dir string) {
	procs, _ := filepath.Glob("/proc/[0-9]*/cwd")
	for _, p := range procs {
		cwd, err := os.Readlink(p)
		if err != nil {
			continue
		}
		cwd = strings.TrimSuffix(cwd, " (deleted)")
		if cwd != dir && !strings.HasPrefix(cwd, dir+"/") {
			continue
		}
		if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p))); err == nil && pid != os.Getpid() {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// groupCommand runs git under childproc's reaper shell: in its own process group, killed when ctx
// ends and when this process dies, so git's transport helpers (git-remote-https, ssh) die too.
func groupCommand(ctx context.Context, name string, args ...string) *exec.Cmd {
	return childproc.GroupCommand(ctx, name, args...)
}

// removeAll removes the private folder; what git still had open there does not keep it.
func removeAll(dir string) {
	if err := os.RemoveAll(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		killWorkingIn(dir)
		_ = os.RemoveAll(dir)
	}
}
