package mirror

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/bootstrap-dev/bootstrap/internal/fsroot"
	"github.com/bootstrap-dev/bootstrap/internal/units"
)

// What a part may hold is checked entry by entry in tarpart; the free space for all the parts
// still to extract is checked here, before the first of them.

// checkFree refuses to start extracting when the unpack folder's file system has less room than
// the parts still to extract declare (their tar sizes bound what they hold), before the first
// byte is written.
func checkFree(root, dest *fsroot.Root, idx *ArchiveIndex) error {
	var need int64
	for _, p := range idx.Parts {
		if m, err := dest.ReadFile(markDir+"/"+p.Name, 128); err == nil && string(m) == p.SHA256 {
			continue
		}
		if _, err := root.Lstat(p.Name); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		need += p.Size
	}
	free, err := dest.Free()
	if err != nil {
		return err
	}
	if need > free {
		return fmt.Errorf("%s: the parts to extract declare %s, and its file system has %s free: nothing was extracted; "+
			"free %s there, or copy the archive to a larger disk", dest.Name("."), units.Bytes(need), units.Bytes(free),
			units.Bytes(need-free))
	}
	return nil
}
