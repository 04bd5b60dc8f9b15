package preflight

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/bootstrap-dev/bootstrap/internal/finding"
	"github.com/bootstrap-dev/bootstrap/internal/site"
	"github.com/bootstrap-dev/bootstrap/internal/units"
)

func diskChecks(_ *site.Site, o Options) []Check {
	if o.WorkDir == "" {
		return nil
	}
	dir := o.WorkDir
	return []Check{Func("disk work dir", CategoryJumpHost, func(ctx context.Context) finding.Finding {
		return checkDisk(dir, o.MinFreeBytes)
	})}
}

// CheckDisk checks that the file system holding dir (or its nearest existing parent) has need
// bytes free. The mirror command uses it for a disk mirror's directory.
func CheckDisk(dir string, need int64) finding.Finding { return checkDisk(dir, need) }

// checkDisk checks the free space of the file system that holds dir, or would hold it: the work
// dir need not exist before the first run, so the nearest existing parent is measured.
func checkDisk(dir string, need int64) finding.Finding {
	at, err := existingParent(dir)
	if err != nil {
		return finding.Failf("Create the work dir's parent or pass --dir.", "work dir %s: %v", dir, err)
	}
	var st unix.Statfs_t
	if err := unix.Statfs(at, &st); err != nil {
		return finding.Failf("Check the work dir's file system is mounted.", "statfs %s: %v", at, err)
	}
	free := int64(st.Bavail) * int64(st.Bsize)
	if free < need {
		return finding.Failf(fmt.Sprintf("Free %s on the file system of %s, or point --dir at a larger one.", units.Bytes(need-free), at),
			"%s free at %s, %s needed", units.Bytes(free), at, units.Bytes(need))
	}
	return finding.Passf("%s free at %s, %s needed", units.Bytes(free), at, units.Bytes(need))
}

func existingParent(dir string) (string, error) {
	p, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		fi, err := os.Stat(p)
		if err == nil {
			if !fi.IsDir() {
				return "", fmt.Errorf("%s is not a directory", p)
			}
			return p, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(p)
		if parent == p {
			return "", err
		}
		p = parent
	}
}
