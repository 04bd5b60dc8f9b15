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

// writeNodeBin writes the nodes' commands into <lab>/node/bin and returns the ForceCommand that
// runs the client's command with them first on PATH. The lab dir gets mode 0711 (traverse, not
// list) so that user core reaches them; secrets stay in 0700 subdirectories.
func writeNodeBin(l *Lab) (string, error) {
	bin := filepath.Join(l.Dir, "node", "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return "", err
	}
	if err := os.Chmod(l.Dir, 0o711); err != nil {
		return "", err
	}
	for _, d := range []string{filepath.Dir(bin), bin} {
		if err := os.Chmod(d, 0o755); err != nil {
			return "", err
		}
	}
	if err := os.WriteFile(filepath.Join(bin, "lsmod"), []byte(nodeLsmod), 0o755); err != nil {
		return "", err
	}
	shell := filepath.Join(filepath.Dir(bin), "shell")
	script := "#!/bin/sh\n# The nodes' shell (lab sshd ForceCommand): the node's commands first on PATH.\n" +
		"PATH=" + bin + ":$PATH\nexport PATH\nexec /bin/sh -c \"$SSH_ORIGINAL_COMMAND\"\n"
	if err := os.WriteFile(shell, []byte(script), 0o755); err != nil {
		return "", err
	}
	return shell, nil
}
