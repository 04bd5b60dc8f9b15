// Package filehash hashes files, streamed (ISOs and archive parts are gigabytes). It is a leaf (the
// standard library only): every package that records or checks a file's SHA-256 uses it.
package filehash

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"os"
	"syscall"
)

// SHA256 returns the lower-case hex SHA-256 of the regular file at path and its size in bytes. A
// FIFO or a device is refused without blocking (one would never end, or never start).
func SHA256(path string) (sum string, size int64, err error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", 0, err
	}
	if !fi.Mode().IsRegular() {
		return "", 0, fmt.Errorf("hash %s: not a regular file (%s); point at a plain file", path, fi.Mode().Type())
	}
	if err := syscall.SetNonblock(int(f.Fd()), false); err != nil {
		return "", 0, err
	}
	sum, size, err = Reader(f)
	if err != nil {
		return "", 0, fmt.Errorf("hash %s: %w", path, err)
	}
	return sum, size, nil
}

// Reader returns the lower-case hex SHA-256 of what r yields and its size in bytes (a file
// already open, so that it is checked and then used without being opened again).
func Reader(r io.Reader) (sum string, size int64, err error) {
	h := sha256.New()
	n, err := io.Copy(h, r)
	if err != nil {
		return "", 0, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// Writer passes what is written on to an underlying writer while hashing and counting it: a
// file's SHA-256 and size known the moment it is written, without reading it again.
type Writer struct {
	w io.Writer
	h hash.Hash
	n int64
}

// NewWriter returns a Writer writing to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w, h: sha256.New()} }

// Write writes p to the underlying writer, hashing and counting what it took.
func (w *Writer) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	w.h.Write(p[:n])
	w.n += int64(n)
	return n, err
}

// Sum is the lower-case hex SHA-256 of what was written so far.
func (w *Writer) Sum() string { return hex.EncodeToString(w.h.Sum(nil)) }

// Size is the number of bytes written so far.
func (w *Writer) Size() int64 { return w.n }
