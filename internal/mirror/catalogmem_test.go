package mirror

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"
	"github.com/regclient/regclient"
	"github.com/regclient/regclient/config"
	"github.com/regclient/regclient/types/descriptor"
	"github.com/regclient/regclient/types/manifest"
	"github.com/regclient/regclient/types/mediatype"
	v1 "github.com/regclient/regclient/types/oci/v1"
	"github.com/regclient/regclient/types/ref"
)

// BenchmarkCatalogMemory reads a catalog of CATALOG_BUNDLES bundles (default 50,000, in 500
// packages of 100, each bundle document about 11 KB, real-shaped: see catalogshape_test.go for
// the figures it copies from real catalogs) with no package list (CATALOG_PACKAGES=a,b: with one) and
// filters it (the head of every channel) as the mirror does (light bundles, then the selected
// bundles' full documents read again and the result written), then reports the peak RSS of that
// (VmHWM, reset just before), the catalog's compressed and uncompressed size. The catalog layer is
// written to disk and pushed as a stream, so generating it does not count. Target: peak-RSS-MB
// at most 200 for 50,000 bundles.
//
//	go test -run '^$' -bench BenchmarkCatalogMemory -benchtime 1x ./internal/mirror
func BenchmarkCatalogMemory(b *testing.B) {
	n := 50000
	if v, err := strconv.Atoi(os.Getenv("CATALOG_BUNDLES")); err == nil && v > 0 {
		n = v
	}
	e := newEnvB(b)
	image, raw := pushBigCatalog(b, e.src.Host, n, nil)
	o := e.opts()
	op := ISCOperator{Catalog: image}
	var names []string
	if v := os.Getenv("CATALOG_PACKAGES"); v != "" {
		names = strings.Split(v, ",")
		for _, n := range names {
			op.Packages = append(op.Packages, ISCPackage{Name: n})
		}
	}
	b.ResetTimer()
	var peak, floor int64
	for b.Loop() {
		runtime.GC()
		debug.FreeOSMemory()
		if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
			b.Skipf("cannot reset the peak RSS: %v", err)
		}
		floor = max(floor, vmHWM(b))
		cr, err := readCatalogLight(b.Context(), image, "linux/amd64", o, true, names...)
		if err != nil {
			b.Fatal(err)
		}
		f, err := FilterCatalog(b.Context(), cr.dc, op, nil, "mirror.operators[0]")
		if err != nil {
			b.Fatal(err)
		}
		if err := cr.fullBundles(b.Context(), o, f.DC); err != nil {
			b.Fatal(err)
		}
		if err := validateCatalog(op, nil, "mirror.operators[0]", f.DC); err != nil {
			b.Fatal(err)
		}
		files, err := WriteFBC(f.DC)
		if err != nil || len(files) == 0 {
			b.Fatal(err)
		}
		peak = max(peak, vmHWM(b))
		runtime.KeepAlive(cr)
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-RSS-MB")
	b.ReportMetric(float64(floor)/(1<<20), "before-RSS-MB") // the test process and its in-process registries
	b.ReportMetric(float64(raw)/(1<<20), "catalog-MB")
	b.ReportMetric(float64(n), "bundles")
	b.ReportMetric(float64(raw)/float64(n)/1000, "bundle-KB")
}

// vmHWM is the process's peak resident set size since the last reset, in bytes.
func vmHWM(tb testing.TB) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		tb.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	tb.Fatal("no VmHWM")
	return 0
}

// pushBigCatalog writes a catalog image of n bundles (its configs layer streamed through a file)
// to host and returns its reference and the uncompressed FBC size. refs, when set, gives each
// package's bundle and related images (see shapedBundle).
func pushBigCatalog(tb testing.TB, host string, n int, refs func(pkg int) []string) (string, int64) {
	dir := tb.TempDir()
	layerPath := filepath.Join(dir, "layer.tgz")
	lf, err := os.Create(layerPath)
	if err != nil {
		tb.Fatal(err)
	}
	gzHash, tarHash := sha256.New(), sha256.New()
	gz := gzip.NewWriter(io.MultiWriter(lf, gzHash))
	tw := tar.NewWriter(io.MultiWriter(gz, tarHash))
	raw := writeBigFBC(n, refs, func(name string, data []byte) {
		if err := tw.WriteHeader(&tar.Header{Name: "configs/" + name, Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
			tb.Fatal(err)
		}
		if _, err := tw.Write(data); err != nil {
			tb.Fatal(err)
		}
	})
	if err := tw.Close(); err != nil {
		tb.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		tb.Fatal(err)
	}
	st, _ := lf.Stat()
	_ = lf.Close()
	layer := descriptor.Descriptor{MediaType: mediatype.OCI1LayerGzip, Digest: digest.NewDigestFromBytes(digest.SHA256, gzHash.Sum(nil)), Size: st.Size()}
	diffID := digest.NewDigestFromBytes(digest.SHA256, tarHash.Sum(nil))
	cfg, _ := json.Marshal(map[string]any{"architecture": "amd64", "os": "linux",
		"config":  map[string]any{"Labels": map[string]string{ConfigsLabel: "/configs"}, "Cmd": []string{"serve", "/configs"}},
		"rootfs":  map[string]any{"type": "layers", "diff_ids": []string{diffID.String()}},
		"history": []any{}})
	cfgDesc := descriptor.Descriptor{MediaType: mediatype.OCI1ImageConfig, Digest: digest.FromBytes(cfg), Size: int64(len(cfg))}
	rc := regclient.New(regclient.WithConfigHost(config.Host{Name: host, TLS: config.TLSDisabled}))
	r, err := ref.New(host + "/redhat/big-operator-index:v4.16")
	if err != nil {
		tb.Fatal(err)
	}
	lr, err := os.Open(layerPath)
	if err != nil {
		tb.Fatal(err)
	}
	defer lr.Close()
	if _, err := rc.BlobPut(tb.Context(), r, layer, bufio.NewReader(lr)); err != nil {
		tb.Fatal(err)
	}
	if _, err := rc.BlobPut(tb.Context(), r, cfgDesc, bytes.NewReader(cfg)); err != nil {
		tb.Fatal(err)
	}
	m, err := manifest.New(manifest.WithOrig(v1.Manifest{Versioned: v1.ManifestSchemaVersion, MediaType: mediatype.OCI1Manifest,
		Config: cfgDesc, Layers: []descriptor.Descriptor{layer}}))
	if err != nil {
		tb.Fatal(err)
	}
	if err := rc.ManifestPut(tb.Context(), r, m); err != nil {
		tb.Fatal(err)
	}
	return r.CommonName(), raw
}

// writeBigFBC generates the real-shaped catalog of n bundles, 100 a package, one
// PACKAGE/catalog.json a package handed to emit, and returns its size.
func writeBigFBC(n int, refs func(pkg int) []string, emit func(name string, data []byte)) int64 {
	const perPkg = 100
	var raw int64
	for p := 0; p*perPkg < n; p++ {
		pkg := fmt.Sprintf("operator-%03d", p)
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		count := min(perPkg, n-p*perPkg)
		_ = enc.Encode(map[string]any{"schema": "olm.package", "name": pkg, "defaultChannel": "stable"})
		var stable, fast []map[string]any
		for i := 0; i < count; i++ {
			e := map[string]any{"name": fmt.Sprintf("%s.v1.%d.0", pkg, i)}
			if i > 0 {
				e["replaces"] = fmt.Sprintf("%s.v1.%d.0", pkg, i-1)
			}
			stable = append(stable, e)
			if i >= count-10 {
				f := map[string]any{"name": e["name"]}
				if len(fast) > 0 {
					f["replaces"] = fast[len(fast)-1]["name"]
				}
				fast = append(fast, f)
			}
		}
		_ = enc.Encode(map[string]any{"schema": "olm.channel", "package": pkg, "name": "stable", "entries": stable})
		_ = enc.Encode(map[string]any{"schema": "olm.channel", "package": pkg, "name": "fast", "entries": fast})
		for i := 0; i < count; i++ {
			var r []string
			if refs != nil {
				r = refs(p)
			}
			_ = enc.Encode(shapedBundle(pkg, fmt.Sprintf("1.%d.0", i), i, p*perPkg+i, r))
		}
		raw += int64(buf.Len())
		emit(pkg+"/catalog.json", buf.Bytes())
	}
	return raw
}
