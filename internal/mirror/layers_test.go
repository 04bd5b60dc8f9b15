package mirror

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/opencontainers/go-digest"
	"github.com/regclient/regclient/types/ref"

	"github.com/bootstrap-dev/bootstrap/internal/mirror/mirrortest"
)

// TestScanImageFilesReadsEveryCompression: release payloads and catalogs are read through the same
// layer reader as ExtractFile, so a zstd or uncompressed layer is read like a gzip one (the release
// scanner once refused anything but gzip), and a layer that is no tar stream is a permanent error.
func TestScanImageFilesReadsEveryCompression(t *testing.T) {
	e := newEnv(t, nil)
	b, o := quayEnv(t, e)
	repo := e.dst.Host + "/ocp/layers"
	rc, err := newClient(o)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		comp mirrortest.Compression
	}{{"gzip", mirrortest.Gzip}, {"zstd", mirrortest.Zstd}, {"uncompressed", mirrortest.Uncompressed}} {
		t.Run(c.name, func(t *testing.T) {
			top := mustLayer(t, c.comp, file("./"+imageRefsPath, `{"kind":"ImageStream"}`), file("etc/motd", "hello"))
			d, err := b.Image(ctx(t), repo, "", mirrortest.ImageSpec{Layers: []mirrortest.Blob{b.Layer(4 << 10), top}})
			if err != nil {
				t.Fatal(err)
			}
			r, _ := ref.New(repo + "@" + d.Digest.String())
			var got []string
			err = scanImageFiles(ctx(t), rc, r, "linux/amd64", func(n string) bool { return n == imageRefsPath },
				func(n string, rd io.Reader) (bool, error) {
					data, err := io.ReadAll(rd)
					got = append(got, n+"="+string(data))
					return true, err
				})
			if err != nil {
				t.Fatal(err)
			}
			if want := imageRefsPath + `={"kind":"ImageStream"}`; len(got) != 1 || got[0] != want {
				t.Fatalf("found %q, want [%q]", got, want)
			}
		})
	}
	bad := mustLayer(t, mirrortest.Uncompressed, file("x", "y"))
	bad.Data = bytes.Repeat([]byte("not a tar header "), 64) // two 512-byte blocks whose checksum is wrong
	bad.Desc.Digest, bad.Desc.Size = digest.FromBytes(bad.Data), int64(len(bad.Data))
	d, err := b.Image(ctx(t), repo, "", mirrortest.ImageSpec{Layers: []mirrortest.Blob{bad}})
	if err != nil {
		t.Fatal(err)
	}
	r, _ := ref.New(repo + "@" + d.Digest.String())
	err = scanImageFiles(ctx(t), rc, r, "linux/amd64", func(string) bool { return true }, func(string, io.Reader) (bool, error) { return true, nil })
	var p *permanentError
	if err == nil || !errors.As(err, &p) {
		t.Fatalf("a layer that is no tar stream: %v, want a permanent error", err)
	}
}
