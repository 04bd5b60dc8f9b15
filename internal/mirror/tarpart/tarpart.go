package tarpart

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"path/filepath"
	"strings"

	"github.com/bootstrap-dev/bootstrap/internal/fsroot"
	"github.com/bootstrap-dev/bootstrap/internal/units"
)

// Reserved is the folder of the unpack layout where the caller keeps its own records (one marker
// per extracted part); no entry may write there.
const Reserved = ".parts"

// Extract extracts a part's regular files under dest, refusing names that leave it, names in
// Reserved (the caller's own records), links on the way, entries that are not regular files (CheckEntry) and
// more bytes than the part declares. Files are written to a fresh temporary name and
// renamed, so an interrupted extraction leaves no torn blob.
func Extract(r io.Reader, dest *fsroot.Root, declared int64) error {
	tr := tar.NewReader(r)
	var total int64
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if h.Typeflag == tar.TypeDir || h.Typeflag == tar.TypeXGlobalHeader {
			continue
		}
		if err := CheckEntry(h); err != nil {
			return err
		}
		if err := CheckTotal(h, total, declared); err != nil {
			return err
		}
		total += h.Size
		name := path.Clean(strings.TrimPrefix(filepath.ToSlash(h.Name), "./"))
		if path.IsAbs(name) || name == ".." || strings.HasPrefix(name, "../") || name == "." || strings.ContainsRune(name, 0) {
			return fmt.Errorf("entry %q leaves the layout", h.Name)
		}
		if name == Reserved || strings.HasPrefix(name, Reserved+"/") {
			return fmt.Errorf("entry %q writes where bootstrap keeps its own records; the part was not written by bootstrap mirror", h.Name)
		}
		if d := path.Dir(name); d != "." {
			if err := dest.MkdirAll(d, 0o755); err != nil {
				return fmt.Errorf("entry %q: %w", h.Name, err)
			}
		}
		tmp := name + ".extracting"
		if err := dest.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		w, err := dest.Create(tmp, 0o644)
		if err != nil {
			return fmt.Errorf("entry %q: %w", h.Name, err)
		}
		if _, err := io.Copy(w, tr); err != nil {
			w.Close()
			return err
		}
		if err := w.Close(); err != nil {
			return err
		}
		if err := dest.Rename(tmp, name); err != nil {
			return fmt.Errorf("entry %q: %w", h.Name, err)
		}
	}
}

// CheckEntry refuses every tar entry but a plain regular file (folders and global PAX headers are
// skipped by the caller).
func CheckEntry(h *tar.Header) error {
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

// CheckTotal refuses an entry that would take the part's extracted bytes past what
// archive.json declares for the part (the tar's own size bounds its content).
func CheckTotal(h *tar.Header, total, declared int64) error {
	if h.Size < 0 || total+h.Size > declared {
		return fmt.Errorf("entry %q (%s) takes the part's extracted size to %s, more than the %s archive.json declares "+
			"for the part; the part was not written by bootstrap mirror", h.Name, units.Bytes(h.Size),
			units.Bytes(total+h.Size), units.Bytes(declared))
	}
	return nil
}
