package mirror

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/bootstrap-dev/bootstrap/internal/filehash"
	"github.com/bootstrap-dev/bootstrap/internal/fsroot"
	"github.com/bootstrap-dev/bootstrap/internal/mirror/tarpart"
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

// markDir holds one marker per extracted part, in the unpack folder; no tar entry may write there
// (tarpart refuses it).
const markDir = tarpart.Reserved

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
	if err := tarpart.Extract(f, dest, p.Size); err != nil {
		return false, fmt.Errorf("%s: %w", f.Name(), err)
	}
	return true, dest.WriteFile(mark, []byte(p.SHA256), 0o644)
}
