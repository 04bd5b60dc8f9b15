package filehash

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
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

// shortWriter takes at most max bytes a call and then fails, as a full disk does.
type shortWriter struct{ max int }

func (s *shortWriter) Write(p []byte) (int, error) {
	if len(p) > s.max {
		return s.max, errors.New("disk full")
	}
	return len(p), nil
}

func TestWriter(t *testing.T) {
	var b strings.Builder
	w := NewWriter(&b)
	for _, part := range []string{"a file's ", "content\n"} {
		if _, err := w.Write([]byte(part)); err != nil {
			t.Fatal(err)
		}
	}
	want := sha256.Sum256([]byte("a file's content\n"))
	if w.Sum() != hex.EncodeToString(want[:]) || w.Size() != 17 || b.String() != "a file's content\n" {
		t.Errorf("Writer: sum %s size %d wrote %q", w.Sum(), w.Size(), b.String())
	}
	// Only what the underlying writer took is hashed and counted.
	sw := NewWriter(&shortWriter{max: 3})
	if n, err := sw.Write([]byte("abcdef")); err == nil || n != 3 {
		t.Fatalf("short write: %d, %v", n, err)
	}
	abc := sha256.Sum256([]byte("abc"))
	if sw.Size() != 3 || sw.Sum() != hex.EncodeToString(abc[:]) {
		t.Errorf("after a short write: size %d sum %s", sw.Size(), sw.Sum())
	}
}
