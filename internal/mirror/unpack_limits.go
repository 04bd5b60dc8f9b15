package mirror

import (
	"archive/tar"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/bootstrap-dev/bootstrap/internal/fsroot"
	"github.com/bootstrap-dev/bootstrap/internal/units"
)

// A carried part is a tar written by bootstrap mirror: regular files only. Anything else in it was
// put there by someone else, and each kind is a way to write more, or elsewhere, than the part
// declares: a sparse entry expands 10 KiB of tar into terabytes of holes filled on disk, a hard
// link or a symbolic link points outside the layout, a device or FIFO node blocks or reads
// forever. Each is refused with the entry named, before any of it is written.

// checkEntry refuses every tar entry but a plain regular file (folders and global PAX headers are
// skipped by the caller).
func checkEntry(h *tar.Header) error {
	for k := range h.PAXRecords {
		if strings.HasPrefix(k, "GNU.sparse.") {
			return fmt.Errorf("entry %q is a sparse file (%s): it would write %s from a few bytes of tar; "+
				"the part was not written by bootstrap mirror", h.Name, k, units.Bytes(h.Size))
		}
	}
	what := ""
	switch h.Typeflag {
	case tar.TypeReg, tar.TypeRegA: //nolint:staticcheck // TypeRegA is what old writers use for a regular file
		return nil
	case tar.TypeGNUSparse:
		what = "a sparse file"
	case tar.TypeLink:
		what = fmt.Sprintf("a hard link to %q", h.Linkname)
	case tar.TypeSymlink:
		what = fmt.Sprintf("a symbolic link to %q", h.Linkname)
	case tar.TypeChar, tar.TypeBlock:
		what = fmt.Sprintf("a device node (%d,%d)", h.Devmajor, h.Devminor)
	case tar.TypeFifo:
		what = "a FIFO"
	default:
		what = fmt.Sprintf("of tar type %q", h.Typeflag)
	}
	return fmt.Errorf("entry %q is %s: a part holds regular files only; the part was not written by bootstrap mirror "+
		"(write it again with bootstrap mirror on the connected side)", h.Name, what)
}

// checkPartTotal refuses an entry that would take the part's extracted bytes past what
// archive.json declares for the part (the tar's own size bounds its content).
func checkPartTotal(h *tar.Header, total, declared int64) error {
	if h.Size < 0 || total+h.Size > declared {
		return fmt.Errorf("entry %q (%s) takes the part's extracted size to %s, more than the %s archive.json declares "+
			"for the part; the part was not written by bootstrap mirror", h.Name, units.Bytes(h.Size),
			units.Bytes(total+h.Size), units.Bytes(declared))
	}
	return nil
}

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
