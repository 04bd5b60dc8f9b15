package agentiso

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/bootstrap-dev/bootstrap/internal/fsroot"
)

// Digests maps a rendered file's relative path to the hex SHA-256 of its contents. It is what the
// journal and the evidence report hold instead of the files (install-config carries a secret).
type Digests map[string]string

// Digests returns the SHA-256 of every rendered file.
func (r *Rendered) Digests() Digests {
	d := Digests{}
	for _, f := range r.Files {
		sum := sha256.Sum256(f.Data)
		d[f.Path] = hex.EncodeToString(sum[:])
	}
	return d
}

// Write puts the rendered files into dir. A file whose contents are already right is left alone
// (so a second run changes nothing, not even modification times); files under openshift/ that
// are no longer rendered are removed so the folder holds exactly what the installer should apply.
// It returns the relative paths it created, changed or removed.
func (r *Rendered) Write(dir string) ([]string, error) {
	var changed []string
	want := map[string]bool{}
	for _, f := range r.Files {
		want[filepath.FromSlash(f.Path)] = true
		p := filepath.Join(dir, filepath.FromSlash(f.Path))
		mode := os.FileMode(0o644)
		if f.Secret {
			mode = 0o600
		}
		old, err := fsroot.ReadBeneath(p, fsroot.Manifest)
		if err == nil && bytes.Equal(old, f.Data) {
			if st, err := os.Stat(p); err == nil && st.Mode().Perm() == mode {
				continue
			}
		}
		if err := writeAtomic(p, f.Data, mode); err != nil {
			return changed, err
		}
		changed = append(changed, f.Path)
	}
	mdir := filepath.Join(dir, ManifestsDir)
	entries, err := os.ReadDir(mdir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return changed, fmt.Errorf("list %s: %w", mdir, err)
	}
	for _, e := range entries {
		rel := filepath.Join(ManifestsDir, e.Name())
		if e.IsDir() || want[rel] || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if err := os.Remove(filepath.Join(dir, rel)); err != nil {
			return changed, fmt.Errorf("remove stale manifest: %w", err)
		}
		changed = append(changed, filepath.ToSlash(rel))
	}
	return changed, nil
}

// writeAtomic writes through a temporary file and a rename, so a crash never leaves half a file.
func writeAtomic(path string, data []byte, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
