package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/agentiso"
)

// TestMain keeps `bootstrap validate` in these tests from running whatever installercheck binary
// this machine has cached (its verdict is tested by internal/agentiso's TestInstallerAttribution,
// against the binary scripts/installercheck.sh builds), unless the caller names one.
func TestMain(m *testing.M) {
	if os.Getenv(agentiso.InstallerCheckEnv) == "" {
		os.Setenv(agentiso.InstallerCheckEnv, installerOff)
	}
	os.Exit(m.Run())
}

// TestValidateNamesTheInstallerCheck: validate says whether the installer's own checks ran, and
// why not: turned off, or a binary that cannot answer.
func TestValidateNamesTheInstallerCheck(t *testing.T) {
	t.Setenv("TEST_GIT_TOKEN", "CANARY-git-token")
	root, _ := siteTestdata(t)
	t.Chdir(filepath.Join(root, "valid"))
	for _, c := range []struct{ bin, want string }{
		{installerOff, "the installer's own checks: off (BOOTSTRAP_INSTALLERCHECK_BIN=off)"},
		{"/nonexistent/installercheck.test", "the installer's own checks: not run: /nonexistent/installercheck.test wrote no verdict"},
	} {
		t.Setenv(agentiso.InstallerCheckEnv, c.bin)
		out, err := testRoot(t, newValidateCmd(), "validate", "-f", "site.yaml")
		if err != nil || !strings.Contains(out, c.want) {
			t.Errorf("%s: err %v, want %q in\n%s", c.bin, err, c.want, out)
		}
	}
}
