package mirror

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// tarOf builds a tar of regular files (name -> content), in the given order.
func tarOf(t testing.TB, files ...[2]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		if err := tw.WriteHeader(&tar.Header{Name: f[0], Mode: 0o644, Size: int64(len(f[1])), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(f[1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// hostileArchive writes parts (each a tar) as mirror_00000N.tar into dir with an archive.json
// listing them; names overrides the name archive.json gives a part.
func hostileArchive(t *testing.T, dir string, names map[int]string, parts ...[]byte) {
	t.Helper()
	idx := ArchiveIndex{APIVersion: ArchiveAPIVersion}
	for i, b := range parts {
		name := filepath.Base(filepath.Join("x", "mirror_00000"+string(rune('1'+i))+".tar"))
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
		if n, ok := names[i]; ok {
			name = n
		}
		sum := sha256.Sum256(b)
		idx.Parts = append(idx.Parts, ArchivePart{Name: name, Size: int64(len(b)), SHA256: hex.EncodeToString(sum[:])})
	}
	b, _ := json.Marshal(idx)
	if err := os.WriteFile(filepath.Join(dir, ArchiveIndexFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// snapshot lists every file under dir with its content (links by their target).
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case rel == ".":
		case d.Type()&fs.ModeSymlink != 0:
			l, _ := os.Readlink(p)
			lines = append(lines, rel+" -> "+l)
		case d.Type().IsRegular():
			b, _ := os.ReadFile(p)
			lines = append(lines, rel+": "+string(b))
		default:
			lines = append(lines, rel+"/")
		}
		return nil
	})
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// TestUnpackArchiveHostile: an archive folder carried on removable media, with links planted at
// every level of the unpack layout, part names that leave the folder, a part that is a link,
// and tar entries that forge the markers. Nothing outside the folder is ever written, read as
// a part, or counted as extracted.
func TestUnpackArchiveHostile(t *testing.T) {
	good := tarOf(t, [2]string{"blobs/sha256/aa", "blob"}, [2]string{"index.json", "{}"}, [2]string{"content.json", "{}"})
	cases := []struct {
		name    string
		plant   func(t *testing.T, dir, outside string) // before unpacking
		names   map[int]string
		parts   [][]byte
		wantErr string // "" when the unpack must succeed
	}{
		{name: "working-dir is a link", wantErr: "symbolic link",
			plant: func(t *testing.T, dir, outside string) {
				must(t, os.Symlink(outside, filepath.Join(dir, "working-dir")))
			}},
		{name: "unpacked is a link", wantErr: "symbolic link",
			plant: func(t *testing.T, dir, outside string) {
				must(t, os.MkdirAll(filepath.Join(dir, "working-dir"), 0o755))
				must(t, os.Symlink(outside, UnpackedLayout(dir)))
			}},
		{name: "unpacked/blobs is a link", wantErr: "symbolic link",
			plant: func(t *testing.T, dir, outside string) {
				must(t, os.MkdirAll(UnpackedLayout(dir), 0o755))
				must(t, os.Symlink(outside, filepath.Join(UnpackedLayout(dir), "blobs")))
			}},
		{name: "unpacked/blobs/sha256 is a relative link", wantErr: "symbolic link",
			plant: func(t *testing.T, dir, outside string) {
				must(t, os.MkdirAll(filepath.Join(UnpackedLayout(dir), "blobs"), 0o755))
				rel, _ := filepath.Rel(filepath.Join(UnpackedLayout(dir), "blobs"), outside)
				must(t, os.Symlink(rel, filepath.Join(UnpackedLayout(dir), "blobs", "sha256")))
			}},
		{name: "the markers' folder is a link", wantErr: "symbolic link",
			plant: func(t *testing.T, dir, outside string) {
				must(t, os.MkdirAll(UnpackedLayout(dir), 0o755))
				must(t, os.Symlink(outside, filepath.Join(UnpackedLayout(dir), ".parts")))
			}},
		{name: "temporary and final names are links to files outside",
			plant: func(t *testing.T, dir, outside string) {
				must(t, os.MkdirAll(filepath.Join(UnpackedLayout(dir), ".parts"), 0o755))
				for _, n := range []string{"index.json.extracting", "content.json", ".parts/mirror_000001.tar", ".parts/mirror_000001.tar.tmp"} {
					must(t, os.Symlink(filepath.Join(outside, "victim"), filepath.Join(UnpackedLayout(dir), n)))
				}
			}},
		{name: "a part name leaves the folder", wantErr: "parts[0].name",
			names: map[int]string{0: "../../../../../../../tmp/x.tar"}},
		{name: "a part name is absolute", wantErr: "parts[0].name",
			names: map[int]string{0: "/etc/x.tar"}},
		{name: "a part name reaches into a subfolder", wantErr: "parts[0].name",
			names: map[int]string{0: "working-dir/x.tar"}},
		{name: "a part is a link to a file outside", wantErr: "symbolic link",
			plant: func(t *testing.T, dir, outside string) {
				p := filepath.Join(dir, "mirror_000001.tar")
				b, _ := os.ReadFile(p)
				must(t, os.WriteFile(filepath.Join(outside, "part.tar"), b, 0o644))
				must(t, os.Remove(p))
				must(t, os.Symlink(filepath.Join(outside, "part.tar"), p))
			}},
		{name: "archive.json is a link", wantErr: "symbolic link",
			plant: func(t *testing.T, dir, outside string) {
				p := filepath.Join(dir, ArchiveIndexFile)
				b, _ := os.ReadFile(p)
				must(t, os.WriteFile(filepath.Join(outside, "archive.json"), b, 0o644))
				must(t, os.Remove(p))
				must(t, os.Symlink(filepath.Join(outside, "archive.json"), p))
			}},
		{name: "a tar entry forges the next part's marker", wantErr: "records",
			parts: [][]byte{tarOf(t, [2]string{".parts/mirror_000002.tar", "x"}), []byte("garbage")}},
		{name: "a tar entry leaves the layout", wantErr: "leaves the layout",
			parts: [][]byte{tarOf(t, [2]string{"../../escaped", "x"})}},
		{name: "a tar entry is absolute", wantErr: "leaves the layout",
			parts: [][]byte{tarOf(t, [2]string{"/../escaped", "x"})}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			top := t.TempDir()
			dir, outside := filepath.Join(top, "media"), filepath.Join(top, "outside")
			must(t, os.MkdirAll(dir, 0o755))
			must(t, os.MkdirAll(outside, 0o755))
			must(t, os.WriteFile(filepath.Join(outside, "victim"), []byte("untouched"), 0o644))
			parts := c.parts
			if parts == nil {
				parts = [][]byte{good}
			}
			hostileArchive(t, dir, c.names, parts...)
			if c.plant != nil {
				c.plant(t, dir, outside)
			}
			before := snapshot(t, outside)
			un, err := UnpackArchive(dir)
			if c.wantErr == "" {
				if err != nil || len(un.Extracted) != 1 {
					t.Fatalf("unpack: %v %+v", err, un)
				}
				if b, err := os.ReadFile(filepath.Join(un.Layout, "content.json")); err != nil || string(b) != "{}" {
					t.Errorf("content.json: %q %v", b, err)
				}
			} else if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("unpack: %v %+v, want an error saying %q", err, un, c.wantErr)
			}
			if after := snapshot(t, outside); after != before {
				t.Errorf("the folder outside changed:\n%s\nwas:\n%s", after, before)
			}
			if b, err := os.ReadFile(filepath.Join(top, "escaped")); err == nil {
				t.Errorf("a file was written beside the archive folder: %q", b)
			}
		})
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestWriteArchivePartialLink: on the connected side, a link planted at the name of the part
// being written (NAME.partial) or of archive.json's temporary file is replaced, not written
// through.
func TestWriteArchivePartialLink(t *testing.T) {
	top := t.TempDir()
	dir, outside := filepath.Join(top, "dir"), filepath.Join(top, "outside")
	layout := filepath.Join(top, "layout")
	must(t, os.MkdirAll(filepath.Join(layout, "blobs", "sha256"), 0o755))
	blob := []byte("a blob")
	sum := sha256.Sum256(blob)
	must(t, os.WriteFile(filepath.Join(layout, "blobs", "sha256", hex.EncodeToString(sum[:])), blob, 0o644))
	must(t, os.MkdirAll(dir, 0o755))
	must(t, os.MkdirAll(outside, 0o755))
	must(t, os.WriteFile(filepath.Join(outside, "victim"), []byte("untouched"), 0o644))
	must(t, os.Symlink(filepath.Join(outside, "victim"), filepath.Join(dir, "mirror_000001.tar.partial")))
	must(t, os.Symlink(filepath.Join(outside, "victim"), filepath.Join(dir, ArchiveIndexFile+".tmp")))
	parts, err := WriteArchive(dir, layout, 1<<20, nil)
	if err != nil || len(parts) != 1 {
		t.Fatalf("write: %v %+v", err, parts)
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "victim")); string(b) != "untouched" {
		t.Errorf("written through a planted link: %q", b)
	}
}
