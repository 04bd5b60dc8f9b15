package mirror

import (
	"bytes"
	"errors"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/opencontainers/go-digest"
	"github.com/regclient/regclient"
	"github.com/regclient/regclient/config"
	"github.com/regclient/regclient/types/descriptor"
	"github.com/regclient/regclient/types/errs"

	"github.com/bootstrap-dev/bootstrap/internal/mirror/mirrortest"
)

const binPath = "usr/bin/openshift-install"

// quayEnv pushes to the env's destination (TLS + htpasswd, as Quay) and reads from it the way the
// iso stage reads the mirror.
func quayEnv(t *testing.T, e *testEnv) (*mirrortest.Builder, Options) {
	t.Helper()
	auths, err := readAuthFile(e.dst.AuthFile)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := os.ReadFile(e.dst.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	rc := regclient.New(regclient.WithConfigHost(config.Host{Name: e.dst.Host, TLS: config.TLSEnabled, RegCert: string(ca),
		User: auths[e.dst.Host].user, Pass: auths[e.dst.Host].pass}))
	o := DefaultOptions(Dest{})
	o.Source = Endpoint{Host: e.dst.Host, CAFile: e.dst.CAFile, AuthFile: e.dst.AuthFile}
	return mirrortest.NewBuilder(rc, 7), o
}

func mustLayer(t *testing.T, c mirrortest.Compression, entries ...mirrortest.Entry) mirrortest.Blob {
	t.Helper()
	l, err := mirrortest.TarLayer(c, entries...)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func file(name, data string) mirrortest.Entry {
	return mirrortest.Entry{Name: name, Mode: 0o755, Data: []byte(data)}
}

func TestExtractFileLayers(t *testing.T) {
	e := newEnv(t, nil)
	b, o := quayEnv(t, e)
	repo := e.dst.Host + "/ocp/openshift-release-dev/ocp-v4.0-art-dev"
	base := b.Layer(64 << 10)
	v1 := mustLayer(t, mirrortest.Gzip, mirrortest.Entry{Name: "usr/bin/", Type: '5'}, file(binPath, "installer v1"))
	v2 := mustLayer(t, mirrortest.Zstd, file("usr/share/doc/README", "docs"), file(binPath, "installer v2 (zstd)"))
	other := mustLayer(t, mirrortest.Uncompressed, file("etc/motd", "hello"))
	gone := mustLayer(t, mirrortest.Gzip, mirrortest.Whiteout(binPath))
	opaque := mustLayer(t, mirrortest.Gzip, mirrortest.Entry{Name: "usr/bin/.wh..wh..opq"}, file(binPath, "installer v3 beside an opaque marker"))
	opaqueOnly := mustLayer(t, mirrortest.Gzip, mirrortest.Entry{Name: "usr/bin/.wh..wh..opq"}, file("usr/bin/other", "x"))
	usrGone := mustLayer(t, mirrortest.Gzip, mirrortest.Whiteout("usr"))
	hard := mustLayer(t, mirrortest.Gzip, file("usr/libexec/openshift-install-real", "installer via hard link"),
		mirrortest.Entry{Name: binPath, Type: '1', Link: "usr/libexec/openshift-install-real"})
	sym := mustLayer(t, mirrortest.Gzip, mirrortest.Entry{Name: binPath, Type: '2', Link: "/opt/openshift-install"})

	cases := []struct {
		name    string
		layers  []mirrortest.Blob
		want    string
		read    int // layers downloaded
		passes  int // times the layers are read (a hard link makes its layer read twice)
		wantErr string
	}{
		{"last layer holding the file wins (zstd over gzip, uncompressed on top)", []mirrortest.Blob{base, v1, v2, other}, "installer v2 (zstd)", 2, 1, ""},
		{"only in the first layer", []mirrortest.Blob{v1, base, other}, "installer v1", 3, 1, ""},
		{"whiteout in a later layer deletes it", []mirrortest.Blob{base, v1, gone, other}, "", 2, 1, "deleted by whiteout usr/bin/.wh.openshift-install in layer 3"},
		{"file written again after a whiteout", []mirrortest.Blob{v1, gone, v2}, "installer v2 (zstd)", 1, 1, ""},
		{"opaque directory hides lower layers, not the file beside it", []mirrortest.Blob{v2, opaque}, "installer v3 beside an opaque marker", 1, 1, ""},
		{"opaque directory above it deletes it", []mirrortest.Blob{v1, opaqueOnly}, "", 1, 1, "deleted by whiteout usr/bin/.wh..wh..opq"},
		{"a deleted parent directory deletes it", []mirrortest.Blob{v1, usrGone}, "", 1, 1, "deleted by whiteout .wh.usr"},
		{"hard link to a file of the same layer", []mirrortest.Blob{base, hard}, "installer via hard link", 1, 2, ""},
		{"symbolic link is refused", []mirrortest.Blob{v1, sym}, "", 1, 1, "symbolic link to /opt/openshift-install"},
		{"no layer holds it", []mirrortest.Blob{base, other}, "", 2, 1, "no layer holds usr/bin/openshift-install"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, err := b.Image(ctx(t), repo, "", mirrortest.ImageSpec{Layers: c.layers})
			if err != nil {
				t.Fatal(err)
			}
			img := repo + "@" + d.Digest.String()
			var out bytes.Buffer
			got, err := ExtractFile(ctx(t), img, "linux/amd64", "/"+binPath, &out, o)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("case %d: err = %v, want %q", i, err, c.wantErr)
				}
				if strings.Contains(c.wantErr, "deleted") || strings.Contains(c.wantErr, "no layer") {
					if !errors.Is(err, ErrFileNotFound) {
						t.Errorf("err %v is not ErrFileNotFound", err)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if out.String() != c.want {
				t.Errorf("extracted %q, want %q", out.String(), c.want)
			}
			if got.LayersRead != c.read || got.Size != int64(len(c.want)) || got.Mode != 0o755 || got.Image != img {
				t.Errorf("result %+v: want %d layers read, size %d, mode 0755, image %s", got, c.read, len(c.want), img)
			}
			var total int64
			for _, l := range c.layers[len(c.layers)-c.read:] {
				total += l.Desc.Size
			}
			if c.passes > 1 {
				total *= int64(c.passes)
			}
			if got.BytesRead != total {
				t.Errorf("read %d bytes, want the %d of the last %d layers", got.BytesRead, total, c.read)
			}
		})
	}
}

func TestExtractFilePlatform(t *testing.T) {
	e := newEnv(t, nil)
	b, o := quayEnv(t, e)
	repo := e.dst.Host + "/ocp/installer"
	amd := mustLayer(t, mirrortest.Gzip, file(binPath, "amd64 build"))
	arm := mustLayer(t, mirrortest.Gzip, file(binPath, "arm64 build"))
	idx, err := b.Index(ctx(t), repo, "multi", []mirrortest.ImageSpec{{Layers: []mirrortest.Blob{amd}}, {Layers: []mirrortest.Blob{arm}, Platform: "linux/arm64"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"linux/amd64", "linux/arm64"} {
		var out bytes.Buffer
		if _, err := ExtractFile(ctx(t), repo+"@"+idx.Digest.String(), p, binPath, &out, o); err != nil {
			t.Fatal(err)
		}
		if want := strings.TrimPrefix(p, "linux/") + " build"; out.String() != want {
			t.Errorf("%s: got %q, want %q", p, out.String(), want)
		}
	}
	single, err := b.Image(ctx(t), repo, "arm", mirrortest.ImageSpec{Layers: []mirrortest.Blob{arm}, Platform: "linux/arm64"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = ExtractFile(ctx(t), repo+"@"+single.Digest.String(), "linux/amd64", binPath, &bytes.Buffer{}, o)
	if err == nil || !strings.Contains(err.Error(), "built for linux/arm64, not linux/amd64") {
		t.Errorf("arm64 image for amd64: err = %v", err)
	}
}

// A layer whose bytes do not match its digest is refused even when the file was read before the
// corruption: the layer is always read to its end.
func TestExtractFileVerifiesLayerDigest(t *testing.T) {
	var corrupt atomic.Bool
	e := newEnv(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if corrupt.Load() && r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/blobs/sha256:") {
				w = &flipLast{ResponseWriter: w}
			}
			h.ServeHTTP(w, r)
		})
	})
	repo := e.src.Host + "/ocp/installer"
	// an uncompressed tar padded to tar's default 10240-byte record: the corruption lands in the
	// padding, after the archive's end, where only the digest can notice it
	l := mustLayer(t, mirrortest.Uncompressed, file(binPath, "installer"))
	data := append(l.Data, make([]byte, 10240-len(l.Data)%10240)...)
	l = mirrortest.Blob{Desc: descriptor.Descriptor{MediaType: l.Desc.MediaType, Digest: digest.FromBytes(data), Size: int64(len(data))}, Data: data}
	d, err := e.b.Image(ctx(t), repo, "", mirrortest.ImageSpec{Layers: []mirrortest.Blob{l}})
	if err != nil {
		t.Fatal(err)
	}
	o := DefaultOptions(Dest{})
	o.Source = Endpoint{Host: e.src.Host, Insecure: true}
	if _, err := ExtractFile(ctx(t), repo+"@"+d.Digest.String(), "linux/amd64", binPath, &bytes.Buffer{}, o); err != nil {
		t.Fatalf("intact layer: %v", err)
	}
	corrupt.Store(true)
	_, err = ExtractFile(ctx(t), repo+"@"+d.Digest.String(), "", binPath, &bytes.Buffer{}, o)
	if !errors.Is(err, errs.ErrDigestMismatch) {
		t.Errorf("corrupted layer: err = %v, want a digest mismatch", err)
	}
}

// flipLast changes the last byte of a response body (the tar's zero padding: the file itself
// reads fine).
type flipLast struct {
	http.ResponseWriter
	size, n int64
}

func (f *flipLast) WriteHeader(code int) {
	f.size, _ = strconv.ParseInt(f.Header().Get("Content-Length"), 10, 64)
	f.ResponseWriter.WriteHeader(code)
}

func (f *flipLast) Write(p []byte) (int, error) {
	if f.size > 0 && f.n+int64(len(p)) == f.size {
		q := append([]byte(nil), p...)
		q[len(q)-1] ^= 0xff
		p = q
	}
	f.n += int64(len(p))
	return f.ResponseWriter.Write(p)
}
