package mirror

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/klauspost/compress/zstd"
	"github.com/opencontainers/go-digest"
	"github.com/regclient/regclient"
	"github.com/regclient/regclient/types/descriptor"
	"github.com/regclient/regclient/types/ref"
)

// errBadLayer marks a layer that is not a tar stream in a compression we read: fetching it again
// cannot help.
var errBadLayer = errors.New("not a layer")

// readLayer streams the tar entries of one layer blob of r's repository to fn, each with its path
// cleaned ("usr/bin/x", never "./usr/bin/x" or "/usr/bin/x"). It is the one layer reader of the
// package: release payloads, catalogs and ExtractFile all read layers through it. The compression
// (gzip, zstd or none) is sniffed from the first bytes: media types vary between Docker and OCI
// manifests and registries, the magic numbers do not. After the last entry the compressed stream
// is read to its end, so regclient checks the blob's digest. It returns the compressed bytes read.
func readLayer(ctx context.Context, rc *regclient.RegClient, r ref.Ref, dig string, size int64,
	fn func(entry string, h *tar.Header, tr *tar.Reader) error) (int64, error) {
	repo, _ := ref.New(r.CommonName())
	br, err := rc.BlobGet(ctx, repo, descriptorFor(dig, size))
	if err != nil {
		return 0, err
	}
	defer br.Close()
	cr := &countingReader{r: br}
	tr, closeFn, err := tarReader(cr)
	if err != nil {
		return cr.n, err
	}
	defer closeFn()
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if errors.Is(err, tar.ErrHeader) {
				err = fmt.Errorf("%w: %w", errBadLayer, err)
			}
			return cr.n, fmt.Errorf("read tar: %w", err)
		}
		if err := fn(strings.TrimPrefix(path.Clean("/"+h.Name), "/"), h, tr); err != nil {
			return cr.n, err
		}
	}
	if _, err := io.Copy(io.Discard, cr); err != nil {
		return cr.n, fmt.Errorf("verify layer: %w", err)
	}
	return cr.n, nil
}

// tarReader sniffs the layer's compression (gzip, zstd or none) from its first bytes.
func tarReader(r io.Reader) (*tar.Reader, func(), error) {
	br := bufio.NewReaderSize(r, 64<<10)
	magic, _ := br.Peek(4)
	switch {
	case bytes.HasPrefix(magic, []byte{0x1f, 0x8b}):
		gz, err := gzip.NewReader(br)
		if err != nil {
			return nil, nil, fmt.Errorf("gzip layer: %w: %w", errBadLayer, err)
		}
		gz.Multistream(true)
		return tar.NewReader(gz), func() { gz.Close() }, nil
	case bytes.Equal(magic, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		zr, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1))
		if err != nil {
			return nil, nil, fmt.Errorf("zstd layer: %w: %w", errBadLayer, err)
		}
		return tar.NewReader(zr), zr.Close, nil
	default:
		return tar.NewReader(br), func() {}, nil
	}
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func descriptorFor(dig string, size int64) descriptor.Descriptor {
	return descriptor.Descriptor{Digest: digest.Digest(dig), Size: size}
}
