package mirror

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/opencontainers/go-digest"

	"github.com/bootstrap-dev/bootstrap/internal/filehash"
	"github.com/bootstrap-dev/bootstrap/internal/fsroot"
)

// Writing a split disk mirror: the staged layout packed into tar parts, listed in archive.json.

// packFile is one file to put in a part: its name in the tar and where it is.
type packFile struct {
	name, path string
	size       int64
	blob       string // digest, for blobs
}

// WriteArchive packs the layout's blobs that no part of DIR's archive carries yet into new parts
// of at most limit bytes, the metadata files (name in the tar -> path) into the last one, and
// returns the parts written by this call. See the package comment on archives.
func WriteArchive(dir, layout string, limit int64, meta map[string]string) ([]ArchivePart, error) {
	if limit <= 0 {
		return nil, fmt.Errorf("archive size must be positive")
	}
	root, err := fsroot.Open(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	idx, err := readArchiveIndex(root)
	if err != nil {
		return nil, err
	}
	if idx, err = finishParts(root, idx); err != nil {
		return nil, err
	}
	carried := map[string]bool{}
	next := 1
	for _, p := range idx.Parts {
		for _, b := range p.Blobs {
			carried[b] = true
		}
		var n int
		if _, err := fmt.Sscanf(p.Name, "mirror_%06d.tar", &n); err == nil && n >= next {
			next = n + 1
		}
	}
	var blobs []packFile
	blobRoot := filepath.Join(layout, "blobs")
	err = filepath.WalkDir(blobRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(blobRoot, p)
		alg, hexPart, ok := strings.Cut(filepath.ToSlash(rel), "/")
		dig := digest.NewDigestFromEncoded(digest.Algorithm(alg), hexPart)
		if !ok || dig.Validate() != nil || carried[dig.String()] {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		blobs = append(blobs, packFile{name: "blobs/" + filepath.ToSlash(rel), path: p, size: fi.Size(), blob: dig.String()})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("archive: read the layout: %w", err)
	}
	sort.Slice(blobs, func(i, j int) bool { return blobs[i].name < blobs[j].name })
	var metas []packFile
	var metaSize int64
	last := map[string]string{} // the metadata the archive carries now
	for _, p := range idx.Parts {
		for n, sum := range p.Files {
			last[n] = sum
		}
	}
	same := true
	for _, name := range sortedKeys(meta) {
		fi, err := os.Stat(meta[name])
		if err != nil {
			return nil, fmt.Errorf("archive: %w", err)
		}
		metas = append(metas, packFile{name: name, path: meta[name], size: fi.Size()})
		metaSize += tarEntrySize(fi.Size())
		if sum, _, err := filehash.SHA256(meta[name]); err != nil || sum != last[name] {
			same = false
		}
	}
	if len(blobs) == 0 && same {
		return nil, nil // nothing new: no part
	}

	// first fit, largest first: each blob goes into the first part it fits in, a blob that fits
	// in no part opens a new one (alone, when it is larger than the limit); the metadata goes
	// into the first part with room for it
	sort.SliceStable(blobs, func(i, j int) bool { return blobs[i].size > blobs[j].size })
	var groups [][]packFile
	var sizes []int64
	place := func(f packFile, sz int64) {
		for i := range groups {
			if sizes[i]+sz+tarTrailer <= limit {
				groups[i] = append(groups[i], f)
				sizes[i] += sz
				return
			}
		}
		groups = append(groups, []packFile{f})
		sizes = append(sizes, sz)
	}
	for _, b := range blobs {
		place(b, tarEntrySize(b.size))
	}
	placed := false
	for i := range groups {
		if sizes[i]+metaSize+tarTrailer <= limit {
			groups[i] = append(groups[i], metas...)
			placed = true
			break
		}
	}
	if !placed && len(metas) > 0 {
		groups = append(groups, metas)
	}
	for _, g := range groups {
		sort.SliceStable(g, func(i, j int) bool { return g[i].name < g[j].name })
	}

	var written []ArchivePart
	for _, g := range groups {
		p, err := writePart(root, fmt.Sprintf("mirror_%06d.tar", next), g)
		if err != nil {
			return written, err
		}
		idx.Parts = append(idx.Parts, p)
		if err := writeArchiveIndex(root, idx); err != nil {
			return written, err
		}
		if err := root.Rename(p.Name+".partial", p.Name); err != nil {
			return written, err
		}
		written = append(written, p)
		next++
	}
	return written, nil
}

// finishParts makes the index agree with the files after an interrupted run: a recorded part
// whose file was not yet renamed is renamed when its .partial is complete (size and SHA-256),
// otherwise dropped from the index so its blobs are packed again; stray .partial files go.
func finishParts(root *fsroot.Root, idx *ArchiveIndex) (*ArchiveIndex, error) {
	kept := idx.Parts[:0]
	changed := false
	for _, p := range idx.Parts {
		final, partial := p.Name, p.Name+".partial"
		if _, err := root.Lstat(final); err == nil {
			kept = append(kept, p)
			continue
		}
		if sum, size, err := rootSHA256(root, partial); err == nil && size == p.Size && sum == p.SHA256 {
			if err := root.Rename(partial, final); err != nil {
				return nil, err
			}
			kept = append(kept, p)
			continue
		}
		if _, err := root.Lstat(partial); err != nil {
			// neither file: the part was carried away (incremental archives); keep the record
			kept = append(kept, p)
			continue
		}
		_ = root.Remove(partial)
		changed = true
	}
	idx.Parts = kept
	stray, _ := filepath.Glob(root.Name("mirror_*.tar.partial"))
	for _, s := range stray {
		_ = root.Remove(filepath.Base(s))
	}
	if changed {
		if err := writeArchiveIndex(root, idx); err != nil {
			return nil, err
		}
	}
	return idx, nil
}

// writePart writes files into DIR/NAME.partial (created afresh: whatever was there, a link
// included, is removed first), synced, and describes it.
func writePart(root *fsroot.Root, name string, files []packFile) (ArchivePart, error) {
	p := ArchivePart{Name: name}
	if err := root.Remove(name + ".partial"); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return p, err
	}
	f, err := root.Create(name+".partial", 0o644)
	if err != nil {
		return p, err
	}
	defer f.Close()
	cw := filehash.NewWriter(f)
	tw := tar.NewWriter(cw)
	for _, pf := range files {
		if err := addFile(tw, pf); err != nil {
			return p, fmt.Errorf("archive %s: %s: %w", name, pf.name, err)
		}
		if pf.blob != "" {
			p.Blobs = append(p.Blobs, pf.blob)
		} else {
			sum, _, err := filehash.SHA256(pf.path)
			if err != nil {
				return p, err
			}
			if p.Files == nil {
				p.Files = map[string]string{}
			}
			p.Files[pf.name] = sum
		}
	}
	if err := tw.Close(); err != nil {
		return p, err
	}
	if err := f.Sync(); err != nil {
		return p, err
	}
	p.Size, p.SHA256 = cw.Size(), cw.Sum()
	return p, f.Close()
}

func addFile(tw *tar.Writer, pf packFile) error {
	src, err := fsroot.OpenFile(pf.path, fsroot.Stream) // regular only; the tar writer bounds it to pf.size
	if err != nil {
		return err
	}
	defer src.Close()
	if err := tw.WriteHeader(&tar.Header{Name: pf.name, Mode: 0o644, Size: pf.size, Typeflag: tar.TypeReg}); err != nil {
		return err
	}
	n, err := io.Copy(tw, src)
	if err == nil && n != pf.size {
		err = fmt.Errorf("changed while packing: %d bytes, want %d", n, pf.size)
	}
	return err
}
