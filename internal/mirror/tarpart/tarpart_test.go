package tarpart

import (
	"archive/tar"
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/fsroot"
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

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// snapshot lists every file under dir with its content (links by their target).
func snapshot(dir string) string {
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

// TestPartLargerThanDeclared: entries holding more than the part's declared size are refused at
// the entry that passes it (a reader that expands an entry beyond its tar bytes cannot write
// more than archive.json promised).
func TestPartLargerThanDeclared(t *testing.T) {
	part := tarOf(t, [2]string{"blobs/sha256/aa", strings.Repeat("a", 600)}, [2]string{"blobs/sha256/bb", strings.Repeat("b", 600)})
	root, err := fsroot.Open(t.TempDir())
	must(t, err)
	defer root.Close()
	err = Extract(bytes.NewReader(part), root, 1000)
	if err == nil || !strings.Contains(err.Error(), `entry "blobs/sha256/bb"`) || !strings.Contains(err.Error(), "1000 B") {
		t.Fatalf("%v", err)
	}
	if _, err := root.Lstat("blobs/sha256/bb"); err == nil {
		t.Error("the entry past the declaration was written")
	}
}

// FuzzExtract: whatever a part holds, extraction writes nothing outside its folder (a link
// planted in it towards a folder outside included), no more than the part's bytes, and never
// panics.
func FuzzExtract(f *testing.F) {
	f.Add(tarOf(f, [2]string{"blobs/sha256/aa", "x"}, [2]string{"index.json", "{}"}))
	f.Add(tarOf(f, [2]string{"escape/x", "x"}))
	f.Add(tarOf(f, [2]string{"../x", "x"}))
	f.Add(tarOf(f, [2]string{"a/../../x", "x"}))
	f.Add(tarOf(f, [2]string{Reserved + "/mirror_000001.tar", "x"}))
	f.Add(tarOf(f, [2]string{"./escape/../escape/y", "x"}))
	f.Add([]byte("not a tar"))
	f.Fuzz(func(t *testing.T, data []byte) {
		top := t.TempDir()
		dest, outside := filepath.Join(top, "dest"), filepath.Join(top, "outside")
		must(t, os.MkdirAll(dest, 0o755))
		must(t, os.MkdirAll(outside, 0o755))
		must(t, os.Symlink(outside, filepath.Join(dest, "escape")))
		root, err := fsroot.Open(dest)
		must(t, err)
		defer root.Close()
		_ = Extract(bytes.NewReader(data), root, int64(len(data))) // refusing is fine; writing outside is not
		if s := snapshot(outside); s != "" {
			t.Fatalf("written outside: %s", s)
		}
		ents, _ := os.ReadDir(top)
		if len(ents) != 2 {
			t.Fatalf("written beside the folder: %v", ents)
		}
		var written int64
		filepath.WalkDir(dest, func(p string, d fs.DirEntry, err error) error {
			if fi, ierr := os.Lstat(p); ierr == nil && fi.Mode().IsRegular() {
				written += fi.Size()
			}
			return nil
		})
		if written > int64(len(data)) {
			t.Fatalf("%d bytes extracted from a part of %d", written, len(data))
		}
	})
}
