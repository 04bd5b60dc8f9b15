package upgradetest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/gather/sshtest"
)

// BackupScript plays cluster-backup.sh: it writes a 3 MB snapshot and the static resources into
// the directory it is given, named as the real script names them.
const BackupScript = `#!/bin/sh
set -e
mkdir -p "$1"
ts=$(date +%Y-%m-%d_%H%M%S)
head -c 3000000 /dev/urandom > "$1/snapshot_$ts.db"
head -c 20000 /dev/urandom | gzip > "$1/static_kuberesources_$ts.tar.gz"
echo "snapshot db and kube resources are successfully saved to $1"
`

// standInSudo drops sudo's options and runs the command as the login user, so the backup's
// real command lines (sudo -n -E SCRIPT DIR) run unchanged on the test's sshd.
const standInSudo = "#!/bin/sh\nwhile [ \"${1#-}\" != \"$1\" ]; do shift; done\nexec \"$@\"\n"

// BackupNode makes the test's sshd a control-plane node for backups: a stand-in sudo on its
// sessions' PATH and script (BackupScript when empty) as the backup script, whose path it returns.
func BackupNode(t testing.TB, s *sshtest.Server, script string) string {
	t.Helper()
	if script == "" {
		script = BackupScript
	}
	if err := os.WriteFile(filepath.Join(s.BinDir, "sudo"), []byte(standInSudo), 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(s.BinDir, "cluster-backup.sh")
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}
