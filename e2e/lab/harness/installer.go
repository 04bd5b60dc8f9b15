package harness

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/bootstrap-dev/bootstrap/internal/agentiso/agentisotest"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// Installer puts the agentiso engineer's openshift-install TEST DOUBLE (never shipped) into
// <lab>/bin and points cluster.installer.path at a wrapper that makes it report the lab's
// release version. The double checks the files it receives as the real installer would and
// writes an ISO laid out like a CoreOS live ISO with xorriso. Built with `go build` from this
// module, so the Go build cache makes later starts fast.
type Installer struct {
	path string
}

// Name implements Component.
func (*Installer) Name() string { return "installer" }

// Start implements Component.
func (i *Installer) Start(ctx context.Context, l *Lab) error {
	dir := filepath.Join(l.Dir, "bin")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	double := filepath.Join(dir, "openshift-install-double")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", double, agentisotest.DoublePackage)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build the openshift-install test double (run the lab from the bootstrap checkout): %v: %s", err, out)
	}
	i.path = filepath.Join(dir, "openshift-install")
	script := "#!/bin/sh\n# openshift-install of the lab: the TEST DOUBLE, reporting the lab's release.\n" +
		"OPENSHIFT_INSTALL_DOUBLE_VERSION=" + ReleaseVersion + " OPENSHIFT_INSTALL_DOUBLE_CLUSTER=" + filepath.Join(l.Dir, ClusterDir) + " exec " + double + " \"$@\"\n"
	return os.WriteFile(i.path, []byte(script), 0o755)
}

// Configure implements Component.
func (i *Installer) Configure(s *site.Site, _ *Lab) error {
	s.Cluster.Installer.Path = "bin/openshift-install"
	return nil
}

// Stop implements Component.
func (*Installer) Stop(context.Context) error { return nil }

// Describe implements Describer.
func (i *Installer) Describe() string {
	return "installer bin/openshift-install: the openshift-install TEST DOUBLE (agentisotest), release " + ReleaseVersion
}
