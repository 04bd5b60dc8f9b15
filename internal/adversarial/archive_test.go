package adversarial

import (
	"archive/tar"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/mirror"
)

func regular(name string) *tar.Header {
	return &tar.Header{Name: name, Mode: 0o644, Typeflag: tar.TypeReg}
}

// TestPartEntriesRefused: a sparse entry (10 GiB from 2 KiB of tar), a hard link, a symbolic link,
// a device node and a FIFO in a part are refused with the entry named, and nothing of the part
// is extracted beyond what came before the entry.
func TestPartEntriesRefused(t *testing.T) {
	tests := map[string]struct {
		part []byte
		want string
	}{
		"sparse":    {sparseBomb(), `"blobs/sha256/big" is a sparse file`},
		"hard link": {tarWith(t, &tar.Header{Name: "blobs/sha256/h", Typeflag: tar.TypeLink, Linkname: "/etc/shadow"}, ""), `"blobs/sha256/h" is a hard link to "/etc/shadow"`},
		"symlink":   {tarWith(t, &tar.Header{Name: "blobs/sha256/s", Typeflag: tar.TypeSymlink, Linkname: "/"}, ""), `"blobs/sha256/s" is a symbolic link`},
		"char dev":  {tarWith(t, &tar.Header{Name: "blobs/sha256/z", Typeflag: tar.TypeChar, Devmajor: 1, Devminor: 5}, ""), `"blobs/sha256/z" is a device node (1,5)`},
		"block dev": {tarWith(t, &tar.Header{Name: "blobs/sha256/b", Typeflag: tar.TypeBlock, Devmajor: 8}, ""), `"blobs/sha256/b" is a device node`},
		"fifo":      {tarWith(t, &tar.Header{Name: "blobs/sha256/f", Typeflag: tar.TypeFifo}, ""), `"blobs/sha256/f" is a FIFO`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			dir := archive(t, tc.part, 0)
			_, err := mirror.UnpackArchive(dir)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%v, want %s", err, tc.want)
			}
			if n := extracted(t, dir); n != 0 {
				t.Errorf("%d bytes extracted", n)
			}
		})
	}
}

// TestFreeSpaceCheckedFirst: an archive.json declaring more than the disk holds is refused before
// the first byte is written, with the need and the free space named.
func TestFreeSpaceCheckedFirst(t *testing.T) {
	part := tarWith(t, regular("blobs/sha256/aa"), "x")
	dir := archive(t, part, 1<<60)
	_, err := mirror.UnpackArchive(dir)
	if err == nil || !strings.Contains(err.Error(), "free") || !strings.Contains(err.Error(), "nothing was extracted") {
		t.Fatalf("1 EiB declared: %v", err)
	}
	ents, _ := os.ReadDir(filepath.Join(mirror.UnpackedLayout(dir)))
	for _, e := range ents {
		if e.Name() != ".parts" {
			t.Errorf("written before the check: %s", e.Name())
		}
	}
}
