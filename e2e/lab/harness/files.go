package harness

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// Files writes the files the profile references that no stand-in owns: the SSH key pair of the
// cluster, the ImageSetConfiguration, and the BMC password file. Files already in the lab dir
// are kept, so a lab dir's profile does not change between starts. The layout is the one
// profiles/lab.yaml documents (ssh/, mirror/, secrets/, certs/).
type Files struct {
	dir string
}

// Name implements Component.
func (*Files) Name() string { return "files" }

// Start implements Component.
func (f *Files) Start(_ context.Context, l *Lab) error {
	f.dir = l.Dir
	for _, d := range []string{"ssh", "secrets"} {
		if err := os.MkdirAll(filepath.Join(l.Dir, d), 0o700); err != nil {
			return err
		}
	}
	key := filepath.Join(l.Dir, "ssh", "id_ed25519")
	if _, err := os.Stat(key + ".pub"); errors.Is(err, fs.ErrNotExist) {
		out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "bootstrap-lab", "-f", key).CombinedOutput()
		if err != nil {
			return fmt.Errorf("ssh-keygen (openssh-client; make deps installs it): %v: %s", err, out)
		}
	}
	return writeIfMissing(filepath.Join(l.Dir, "mirror", "imageset-config.yaml"), []byte(imageSetConfig), 0o644)
}

// Configure implements Component.
func (f *Files) Configure(s *site.Site, _ *Lab) error {
	s.Cluster.SSHKeyFile = "ssh/id_ed25519.pub"
	s.Mirror.ImageSetConfig = "mirror/imageset-config.yaml"
	for _, n := range s.Nodes {
		if p := n.BMC.Password.File; p != "" {
			if err := writeIfMissing(filepath.Join(f.dir, p), []byte(randomSecret()), 0o600); err != nil {
				return err
			}
		}
	}
	return nil
}

// Stop implements Component.
func (*Files) Stop(context.Context) error { return nil }

func writeIfMissing(path string, b []byte, mode os.FileMode) error {
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return os.WriteFile(path, b, mode)
}

func randomSecret() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b)
}

// imageSetConfig is a placeholder until the lab's source registry carries a synthetic release.
const imageSetConfig = `# oc-mirror v2 ImageSetConfiguration for the lab (the mirror stand-ins replace it).
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  platform:
    channels:
      - name: stable-4.18
        minVersion: 4.18.0
        maxVersion: 4.18.0
`
