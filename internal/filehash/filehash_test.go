package filehash

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestSHA256(t *testing.T) {
	dir := t.TempDir()
	data := []byte("a file's content\n")
	path := filepath.Join(dir, "f")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	want := sha256.Sum256(data)
	sum, size, err := SHA256(path)
	if err != nil || sum != hex.EncodeToString(want[:]) || size != int64(len(data)) {
		t.Fatalf("SHA256 = %s, %d, %v; want %x, %d", sum, size, err, want, len(data))
	}
	if _, _, err := SHA256(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a missing file: %v, want fs.ErrNotExist", err)
	}
	if _, _, err := SHA256(dir); err == nil {
		t.Fatal("a directory hashed without an error")
	}
}
