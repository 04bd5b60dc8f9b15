package adversarial

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/mirror"
)

// fast runs f and fails the test when it has not returned within d: a hostile file that blocks
// (a FIFO without a writer) must be refused, not waited on.
func fast(t *testing.T, d time.Duration, what string, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		t.Fatalf("%s still blocked after %v", what, d)
		return nil
	}
}

// ustar is a raw tar header block (for entries archive/tar's writer will not write).
func ustar(name string, size int64, flag byte) []byte {
	b := make([]byte, 512)
	copy(b, name)
	copy(b[100:], "0000644\x00")
	copy(b[108:], "0000000\x00")
	copy(b[116:], "0000000\x00")
	copy(b[124:], fmt.Sprintf("%011o\x00", size))
	copy(b[136:], "00000000000\x00")
	copy(b[148:], "        ")
	b[156] = flag
	copy(b[257:], "ustar\x0000")
	sum := 0
	for _, c := range b {
		sum += int(c)
	}
	copy(b[148:], fmt.Sprintf("%06o\x00 ", sum))
	return b
}

// paxRecords encodes PAX extended header records.
func paxRecords(kv ...string) []byte {
	var out []byte
	for i := 0; i+1 < len(kv); i += 2 {
		r := " " + kv[i] + "=" + kv[i+1] + "\n"
		n := len(r) + 1
		for len(fmt.Sprint(n))+len(r) != n {
			n++
		}
		out = append(out, fmt.Sprintf("%d%s", n, r)...)
	}
	return out
}

// sparseBomb is a part of about 2 KiB whose one entry expands to 10 GiB of holes.
func sparseBomb() []byte {
	var buf bytes.Buffer
	p := paxRecords("GNU.sparse.major", "1", "GNU.sparse.minor", "0", "GNU.sparse.name", "blobs/sha256/big",
		"GNU.sparse.realsize", "10737418240")
	buf.Write(ustar("PaxHeaders/big", int64(len(p)), 'x'))
	buf.Write(p)
	buf.Write(make([]byte, (512-len(p)%512)%512))
	tw := tar.NewWriter(&buf)
	data := []byte("1\n10737418239\n1\n")
	data = append(data, make([]byte, 512-len(data))...)
	data = append(data, 'x')
	tw.WriteHeader(&tar.Header{Name: "GNUSparseFile.0/big", Typeflag: tar.TypeReg, Size: int64(len(data)), Mode: 0o644})
	tw.Write(data)
	tw.Close()
	return buf.Bytes()
}

// tarWith is a part holding one entry h (with body for regular files).
func tarWith(t *testing.T, h *tar.Header, body string) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	h.Size = int64(len(body))
	if h.Typeflag != tar.TypeReg {
		h.Size = 0
	}
	if err := tw.WriteHeader(h); err != nil {
		t.Fatal(err)
	}
	tw.Write([]byte(body))
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// archive writes part as mirror_000001.tar in a fresh folder with an archive.json declaring it
// (declared overrides the size archive.json gives when > 0) and returns the folder.
func archive(t *testing.T, part []byte, declared int64) string {
	t.Helper()
	dir := t.TempDir()
	name := "mirror_000001.tar"
	if err := os.WriteFile(filepath.Join(dir, name), part, 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(part)
	size := int64(len(part))
	if declared > 0 {
		size = declared
	}
	idx := mirror.ArchiveIndex{APIVersion: mirror.ArchiveAPIVersion,
		Parts: []mirror.ArchivePart{{Name: name, Size: size, SHA256: hex.EncodeToString(sum[:])}}}
	b, _ := json.Marshal(idx)
	if err := os.WriteFile(filepath.Join(dir, mirror.ArchiveIndexFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// extracted is the bytes of regular files under the archive's unpack folder.
func extracted(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	filepath.Walk(mirror.UnpackedLayout(dir), func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() && filepath.Base(filepath.Dir(p)) != ".parts" {
			n += fi.Size()
		}
		return nil
	})
	return n
}
