package mirrortest

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/regclient/regclient"
	"github.com/regclient/regclient/types/manifest"
	"github.com/regclient/regclient/types/ref"
)

// OPM is the real opm the catalog tests prove filtered catalogs with: $OPM, or opm on PATH, or
// "" (scripts/opm.sh builds it; `make test` sets OPM).
func OPM() string {
	if p := os.Getenv("OPM"); p != "" {
		return p
	}
	p, _ := exec.LookPath("opm")
	return p
}

// Serves proves a file-based catalog directory with the real opm: `opm validate` passes and
// `opm serve` starts and accepts connections (what a CatalogSource pod does).
func Serves(t testing.TB, opm, dir string) {
	t.Helper()
	c, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(c, opm, "validate", dir).CombinedOutput(); err != nil {
		t.Fatalf("opm validate %s: %v\n%s", dir, err, out)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	_ = l.Close()
	logf := dir + ".serve.log"
	lf, err := os.Create(logf)
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	// --pprof-addr= turns off opm's profiling endpoint, fixed at localhost:6060 by default: two
	// opm serve at once (tests of several packages run in parallel) would collide on it
	serve := exec.CommandContext(c, opm, "serve", dir, "-p", port, "--pprof-addr=")
	serve.Stdout, serve.Stderr = lf, lf
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- serve.Wait() }()
	defer func() {
		_ = serve.Process.Kill()
		<-exited
	}()
	for {
		conn, err := net.DialTimeout("tcp", "127.0.0.1:"+port, time.Second)
		if err == nil {
			_ = conn.Close()
			return
		}
		select {
		case err := <-exited:
			exited <- err
			b, _ := os.ReadFile(logf)
			t.Fatalf("opm serve %s exited: %v\n%s", dir, err, b)
		case <-c.Done():
			b, _ := os.ReadFile(logf)
			t.Fatalf("opm serve %s did not answer:\n%s", dir, b)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// WriteFiles writes name → content files under dir.
func WriteFiles(dir string, files map[string][]byte) error {
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// TopLayerFiles extracts the regular files under prefix ("configs/") of an image's last layer into
// dir: the layer a filtered catalog adds (its opaque whiteout hides the catalog's own configs).
func TopLayerFiles(ctx context.Context, rc *regclient.RegClient, image, prefix, dir string) (int, error) {
	r, err := ref.New(image)
	if err != nil {
		return 0, err
	}
	m, err := rc.ManifestGet(ctx, r)
	if err != nil {
		return 0, err
	}
	img, ok := m.(manifest.Imager)
	if !ok {
		return 0, errors.New("not an image manifest")
	}
	layers, err := img.GetLayers()
	if err != nil || len(layers) == 0 {
		return 0, fmt.Errorf("layers: %v", err)
	}
	br, err := rc.BlobGet(ctx, r, layers[len(layers)-1])
	if err != nil {
		return 0, err
	}
	defer br.Close()
	gz, err := gzip.NewReader(br)
	if err != nil {
		return 0, err
	}
	tr := tar.NewReader(gz)
	files := map[string][]byte{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 0, err
		}
		name := strings.TrimPrefix(h.Name, "/")
		if h.Typeflag != tar.TypeReg || !strings.HasPrefix(name, prefix) || strings.Contains(name, "..") || strings.HasPrefix(filepath.Base(name), ".wh.") {
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return 0, err
		}
		files[strings.TrimPrefix(name, prefix)] = data
	}
	return len(files), WriteFiles(dir, files)
}
