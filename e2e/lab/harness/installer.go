package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/bootstrap-dev/bootstrap/internal/agentiso/agentisotest"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// InstallerPath is where the lab puts its openshift-install, relative to the lab dir.
const InstallerPath = "bin/openshift-install"

// Installer builds the openshift-install test double (internal/agentiso/agentisotest, never
// shipped) into the lab dir and points cluster.installer.path at it: the iso stage runs it as
// it would the real installer, and it writes an agent ISO laid out like CoreOS's with xorriso.
// Go's build cache makes every start after the first quick.
type Installer struct{}

// Name implements Component.
func (*Installer) Name() string { return "installer" }

// Start implements Component.
func (*Installer) Start(_ context.Context, l *Lab) error {
	dir := filepath.Join(l.Dir, filepath.Dir(InstallerPath))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if _, err := agentisotest.BuildInstallerDouble(dir); err != nil {
		return fmt.Errorf("%w (the lab builds it with the go tool, from inside the module)", err)
	}
	return nil
}

// Configure implements Component.
func (*Installer) Configure(s *site.Site, _ *Lab) error {
	s.Cluster.Installer.Path = InstallerPath
	return nil
}

// Stop implements Component.
func (*Installer) Stop(context.Context) error { return nil }

// Describe implements Describer.
func (*Installer) Describe() string {
	return "installer  " + InstallerPath + " (the openshift-install test double)"
}
