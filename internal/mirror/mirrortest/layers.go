package mirrortest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"

	"github.com/klauspost/compress/zstd"
	"github.com/regclient/regclient/types/mediatype"
)

// Entry is one tar entry of a layer built by TarLayer.
type Entry struct {
	Name string
	// Type is a tar type flag; zero means a regular file.
	Type byte
	Mode int64 // default 0644 (0755 for directories)
	Data []byte
	// Link is the target of a hard or symbolic link.
	Link string
}

// Compression of a layer built by TarLayer.
type Compression int

// Layer compressions: the media types OCI images use.
const (
	Gzip Compression = iota
	Zstd
	Uncompressed
)

// Whiteout returns the entry that deletes path in the layers below (".wh.<base>" beside it).
func Whiteout(path string) Entry {
	dir, base := "", path
	for i := len(path) - 1; i >= 0; i-- {
		if path[i] == '/' {
			dir, base = path[:i+1], path[i+1:]
			break
		}
	}
	return Entry{Name: dir + ".wh." + base}
}

// TarLayer returns a layer of the entries, in the order given, compressed as asked.
func TarLayer(c Compression, entries ...Entry) (Blob, error) {
	var tarBuf bytes.Buffer
	tw := tar.NewWriter(&tarBuf)
	for _, e := range entries {
		h := &tar.Header{Name: e.Name, Typeflag: e.Type, Mode: e.Mode, Linkname: e.Link}
		if h.Typeflag == 0 {
			h.Typeflag = tar.TypeReg
		}
		if h.Mode == 0 {
			h.Mode = 0o644
			if h.Typeflag == tar.TypeDir {
				h.Mode = 0o755
			}
		}
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(e.Data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return Blob{}, err
		}
		if h.Size > 0 {
			if _, err := tw.Write(e.Data); err != nil {
				return Blob{}, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return Blob{}, err
	}
	switch c {
	case Uncompressed:
		return newBlob(mediatype.OCI1Layer, tarBuf.Bytes()), nil
	case Zstd:
		var buf bytes.Buffer
		zw, err := zstd.NewWriter(&buf)
		if err != nil {
			return Blob{}, err
		}
		if _, err := zw.Write(tarBuf.Bytes()); err != nil {
			return Blob{}, err
		}
		if err := zw.Close(); err != nil {
			return Blob{}, err
		}
		return newBlob(mediatype.OCI1LayerZstd, buf.Bytes()), nil
	case Gzip:
		var buf bytes.Buffer
		gz := gzip.NewWriter(&buf)
		if _, err := gz.Write(tarBuf.Bytes()); err != nil {
			return Blob{}, err
		}
		if err := gz.Close(); err != nil {
			return Blob{}, err
		}
		return newBlob(mediatype.OCI1LayerGzip, buf.Bytes()), nil
	}
	return Blob{}, fmt.Errorf("unknown compression %d", c)
}
