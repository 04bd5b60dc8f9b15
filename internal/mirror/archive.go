package mirror

import (
	"archive/tar"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/opencontainers/go-digest"

	"github.com/bootstrap-dev/bootstrap/internal/filehash"
	"github.com/bootstrap-dev/bootstrap/internal/fsroot"
)

// Archives: a file:// run with an archive size (oc-mirror v2's archiveSize / --archive-size, in
// GiB) stages its OCI layout in DIR/working-dir/oci and then packs it into numbered tar parts,
// DIR/mirror_000001.tar, ..., each no larger than the size (first fit, largest blob first), listed with their SHA-256 in
// DIR/archive.json. A blob is never split across parts; a blob larger than the size alone gets a
// part of its own. Parts are incremental: a later run packs only the blobs no earlier part
// carried, so only its new parts need to travel. The last part of each run also carries the
// layout's index.json and oci-layout and the run's content.json, so that the parts, extracted
// in order, are a complete layout.
//
// A part is written as NAME.partial, synced, recorded in archive.json, then renamed: a run killed
// while packing leaves every finished part untouched and the next run finishes or redoes only
// the unfinished one. On the disconnected side (--from file://DIR), every part present is checked
// against its SHA-256 and extracted (once: a resumed push does not extract again) into
// DIR/working-dir/unpacked, which is then pushed from like any disk mirror.

// ArchiveIndexFile lists the parts of an archive, in DIR.
const ArchiveIndexFile = "archive.json"

// ArchiveAPIVersion identifies archive.json.
const ArchiveAPIVersion = "bootstrap.dev/archive/v1"

// ArchiveIndex is archive.json.
type ArchiveIndex struct {
	APIVersion string        `json:"apiVersion"`
	Parts      []ArchivePart `json:"parts"`
}

// ArchivePart is one tar part.
type ArchivePart struct {
	Name   string   `json:"name"`
	Size   int64    `json:"size"`
	SHA256 string   `json:"sha256"`
	Blobs  []string `json:"blobs"`
	// Files are the layout metadata and content.json (name -> SHA-256), in the last part of a run.
	Files map[string]string `json:"files,omitempty"`
}

// ArchiveLayout is where a file:// run with an archive size stages its OCI layout.
func ArchiveLayout(dir string) string { return filepath.Join(dir, "working-dir", "oci") }

// ArchiveContent is where such a run writes content.json before packing it.
func ArchiveContent(dir string) string { return filepath.Join(dir, "working-dir", "content.json") }

// UnpackedLayout is where the parts are extracted on the disconnected side.
func UnpackedLayout(dir string) string { return filepath.Join(dir, "working-dir", "unpacked") }

// tarEntrySize is what one file takes in a tar stream: a header block and the data padded to 512.
func tarEntrySize(n int64) int64 { return 512 + (n+511)/512*512 }

// tarTrailer is the end-of-archive marker.
const tarTrailer = 1024

// maxArchiveIndex bounds archive.json (a part lists its blobs: some 75 bytes each).
const maxArchiveIndex = 256 << 20

// ReadArchiveIndex reads DIR/archive.json; a missing file is an empty index. The file must be a
// regular file in DIR (not a link), and every part's name a plain file name in DIR.
func ReadArchiveIndex(dir string) (*ArchiveIndex, error) {
	root, err := fsroot.Open(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return readArchiveIndex(root)
}

func readArchiveIndex(root *fsroot.Root) (*ArchiveIndex, error) {
	idx := &ArchiveIndex{APIVersion: ArchiveAPIVersion}
	name := root.Name(ArchiveIndexFile)
	b, err := root.ReadFile(ArchiveIndexFile, maxArchiveIndex)
	if errors.Is(err, fs.ErrNotExist) {
		return idx, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, idx); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if idx.APIVersion != ArchiveAPIVersion {
		return nil, fmt.Errorf("%s: apiVersion %q, want %q", name, idx.APIVersion, ArchiveAPIVersion)
	}
	seen := map[string]bool{}
	for i, p := range idx.Parts {
		if !partName(p.Name) {
			return nil, fmt.Errorf("%s: parts[%d].name %q: not a file name in the archive's folder (want mirror_NNNNNN.tar); the file was not written by bootstrap mirror", name, i, p.Name)
		}
		if seen[p.Name] {
			return nil, fmt.Errorf("%s: parts[%d].name %q: listed twice", name, i, p.Name)
		}
		seen[p.Name] = true
	}
	return idx, nil
}

// partName: a part is a plain, visible file name in DIR, never a path.
func partName(n string) bool {
	return n != "" && len(n) <= 255 && !strings.ContainsAny(n, "/\\\x00") && !strings.HasPrefix(n, ".") &&
		strings.HasSuffix(n, ".tar")
}

func writeArchiveIndex(root *fsroot.Root, idx *ArchiveIndex) error {
	b, err := json.MarshalIndent(idx, "", "  ")
	if err != nil {
		return err
	}
	return root.WriteFile(ArchiveIndexFile, append(b, '\n'), 0o644)
}

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
	src, err := os.Open(pf.path)
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

func rootSHA256(root *fsroot.Root, rel string) (string, int64, error) {
	f, err := root.Open(rel)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	return filehash.Reader(f)
}

// UnpackResult says what UnpackArchive did.
type UnpackResult struct {
	Layout    string   // the extracted layout to push from
	Extracted []string // parts extracted by this call
	Skipped   []string // parts extracted by an earlier call
	Missing   []string // parts archive.json lists that are not in DIR (carried earlier, or lost)
}

// UnpackArchive checks every part present in DIR against archive.json's SHA-256 and extracts
// them, in order, into UnpackedLayout(dir). A part whose checksum does not match fails the whole
// call before anything of it is extracted. A part already extracted (a marker records its
// checksum) is not extracted again.
//
// DIR arrives on removable media and is trusted with nothing but its bytes: every path is
// resolved beneath DIR without following a link (a link anywhere in the archive's layout, the
// unpack folder included, is refused), parts are read from DIR only, each part is checked and
// extracted from the same open file, files are created O_EXCL, and the markers live where no
// tar entry may write (an entry under .parts is refused).
func UnpackArchive(dir string) (*UnpackResult, error) {
	root, err := fsroot.Open(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	idx, err := readArchiveIndex(root)
	if err != nil {
		return nil, err
	}
	if len(idx.Parts) == 0 {
		return nil, fmt.Errorf("%s: no %s; not an archive written with an archive size", dir, ArchiveIndexFile)
	}
	out := &UnpackResult{Layout: UnpackedLayout(dir)}
	unpacked := "working-dir/unpacked"
	if err := root.MkdirAll(unpacked, 0o755); err != nil {
		return nil, fmt.Errorf("the unpack folder: %w; remove it (it is not one bootstrap made)", err)
	}
	dest, err := root.Sub(unpacked)
	if err != nil {
		return nil, err
	}
	defer dest.Close()
	if err := dest.Mkdir(markDir, 0o755); err != nil {
		return nil, fmt.Errorf("the unpack folder: %w; remove it (it is not one bootstrap made)", err)
	}
	if err := checkFree(root, dest, idx); err != nil {
		return nil, err
	}
	for _, p := range idx.Parts {
		done, err := unpackPart(root, dest, p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			out.Missing = append(out.Missing, p.Name)
		case err != nil:
			return nil, err
		case done:
			out.Extracted = append(out.Extracted, p.Name)
		default:
			out.Skipped = append(out.Skipped, p.Name)
		}
	}
	return out, nil
}

// markDir holds one marker per extracted part, in the unpack folder; no tar entry may write there.
const markDir = ".parts"

// unpackPart checks and extracts one part unless its marker says it was; fs.ErrNotExist when
// the part is not in DIR.
func unpackPart(root, dest *fsroot.Root, p ArchivePart) (bool, error) {
	f, err := root.Open(p.Name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, fs.ErrNotExist
		}
		return false, fmt.Errorf("part %s: %w", p.Name, err)
	}
	defer f.Close()
	mark := markDir + "/" + p.Name
	if m, err := dest.ReadFile(mark, 128); err == nil && string(m) == p.SHA256 {
		return false, nil
	}
	sum, size, err := filehash.Reader(f)
	if err != nil {
		return false, err
	}
	if sum != p.SHA256 || size != p.Size {
		return false, fmt.Errorf("%s: sha256 %s (%d bytes), archive.json says %s (%d bytes): the part is damaged; copy it again",
			f.Name(), sum, size, p.SHA256, p.Size)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return false, err
	}
	if err := extractPart(f, dest, p.Size); err != nil {
		return false, fmt.Errorf("%s: %w", f.Name(), err)
	}
	return true, dest.WriteFile(mark, []byte(p.SHA256), 0o644)
}

// extractPart extracts a part's regular files under dest, refusing names that leave it, names in
// the markers' folder, links on the way, entries that are not regular files (checkEntry) and
// more bytes than the part declares. Files are written to a fresh temporary name and
// renamed, so an interrupted extraction leaves no torn blob.
func extractPart(r io.Reader, dest *fsroot.Root, declared int64) error {
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
		if err := checkEntry(h); err != nil {
			return err
		}
		if err := checkPartTotal(h, total, declared); err != nil {
			return err
		}
		total += h.Size
		name := path.Clean(strings.TrimPrefix(filepath.ToSlash(h.Name), "./"))
		if path.IsAbs(name) || name == ".." || strings.HasPrefix(name, "../") || name == "." || strings.ContainsRune(name, 0) {
			return fmt.Errorf("entry %q leaves the layout", h.Name)
		}
		if name == markDir || strings.HasPrefix(name, markDir+"/") {
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
