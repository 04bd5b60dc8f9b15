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

// doubleClusterFile names, for the openshift-install TEST DOUBLE, the directory where the lab's
// cluster player writes the wait-for markers; the double looks for it in its asset directory and
// the directories above (the work dir is beside the profile, in the lab dir).
const doubleClusterFile = ".openshift-install-double-cluster"

// Installer is the lab's side of openshift-install: the agentiso engineer's TEST DOUBLE (never
// shipped) travels in the lab's release payload as its installer component (SeedContent), and
// the profile names no installer path, so the iso stage extracts it from the mirrored payload as
// it would the real one. Start leaves the file that tells the double where the cluster is.
type Installer struct{}

// Name implements Component.
func (*Installer) Name() string { return "installer" }

// Start implements Component.
func (*Installer) Start(_ context.Context, l *Lab) error {
	return os.WriteFile(filepath.Join(l.Dir, doubleClusterFile), []byte(filepath.Join(l.Dir, ClusterDir)+"\n"), 0o644)
}

// Configure implements Component.
func (*Installer) Configure(s *site.Site, _ *Lab) error {
	s.Cluster.Installer.Path = ""
	return nil
}

// Stop implements Component.
func (*Installer) Stop(context.Context) error { return nil }

// Describe implements Describer.
func (*Installer) Describe() string {
	return "installer the openshift-install TEST DOUBLE (agentisotest) in the release payload's installer component, release " + ReleaseVersion
}

// buildDouble compiles the test double (reproducibly: -trimpath, no VCS stamp, so every checkout
// of the same source seeds the same digests) and returns its bytes.
func buildDouble(ctx context.Context) ([]byte, error) {
	dir, err := os.MkdirTemp("", "openshift-install-double-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "openshift-install")
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=false", "-o", out, agentisotest.DoublePackage)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("build the openshift-install test double (run the lab from the bootstrap checkout): %v: %s", err, b)
	}
	return os.ReadFile(out)
}
