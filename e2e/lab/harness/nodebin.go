package harness

import (
	"os"
	"path/filepath"
)

// nodeLsmod is the nodes' lsmod: this machine's when it has /proc/modules (some sandboxes have
// none), else the modules of a lab GPU node with the irdma blacklist in effect.
const nodeLsmod = `#!/bin/sh
# lsmod of a lab node (written by the lab's sshd component).
if [ -r /proc/modules ]; then exec /usr/sbin/lsmod "$@"; fi
cat <<'MODULES'
Module                  Size  Used by
ice                  1093632  0
nvidia_uvm           4931584  0
nvidia              62676992  1 nvidia_uvm
ib_core               507904  0
xfs                  2293760  3
MODULES
`

// writeNodeBin writes the nodes' commands into a new world-readable temporary directory (user
// core must reach them, and the lab dir or its parents may be 0700) and returns that directory
// and the ForceCommand that runs the client's command with them first on PATH. Nothing secret
// goes there.
func writeNodeBin() (dir, shell string, err error) {
	dir, err = os.MkdirTemp(reachableTempRoot(), "bootstrap-lab-node-")
	if err != nil {
		return "", "", err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(dir)
		}
	}()
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		return "", "", err
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return "", "", err
	}
	if err := os.WriteFile(filepath.Join(bin, "lsmod"), []byte(nodeLsmod), 0o755); err != nil {
		return "", "", err
	}
	shell = filepath.Join(dir, "shell")
	script := "#!/bin/sh\n# The nodes' shell (lab sshd ForceCommand): the node's commands first on PATH.\n" +
		"PATH=" + bin + ":$PATH\nexport PATH\nexec /bin/sh -c \"$SSH_ORIGINAL_COMMAND\"\n"
	if err := os.WriteFile(shell, []byte(script), 0o755); err != nil {
		return "", "", err
	}
	return dir, shell, nil
}

// reachableTempRoot is the first of $TMPDIR, /var/tmp and /tmp that every user can traverse (each
// of its ancestors has the x bit for others): a TMPDIR inside a private 0700 folder (some CI
// runners and sandboxes set one) would leave user core unable to run the node's shell ("shell:
// Permission denied" at configure). Falls back to the default temporary directory.
func reachableTempRoot() string {
	for _, root := range []string{os.TempDir(), "/var/tmp", "/tmp"} {
		if traversable(root) {
			return root
		}
	}
	return ""
}

// traversable reports whether dir and all its ancestors exist and are searchable by others.
func traversable(dir string) bool {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return false
	}
	for {
		fi, err := os.Stat(dir)
		if err != nil || !fi.IsDir() || fi.Mode().Perm()&0o001 == 0 {
			return false
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return true
		}
		dir = parent
	}
}
