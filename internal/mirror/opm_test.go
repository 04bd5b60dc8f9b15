package mirror

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/regclient/regclient/types/ref"

	"github.com/bootstrap-dev/bootstrap/internal/mirror/mirrortest"
)

// TestFilteredCatalogServesWithOPM proves a rebuilt catalog with the real opm: the filtered
// configs, extracted from the pushed image as a container would see them, pass `opm validate` and
// `opm serve` (with the image's command, cache arguments dropped) starts and accepts connections.
// It needs opm (OPM=/path/to/opm or on PATH; github.com/operator-framework/operator-registry
// v1.47.0 builds from the module proxy).
func TestFilteredCatalogServesWithOPM(t *testing.T) {
	opm := mirrortest.OPM()
	if opm == "" {
		t.Skip("opm not found: set OPM=/path/to/opm to run this proof")
	}
	e := newEnv(t, nil)
	cat, err := e.b.Catalog(ctx(t), testCatalogSpec(e.src.Host))
	if err != nil {
		t.Fatal(err)
	}
	isc := &ImageSetConfig{File: "isc.yaml", Mirror: ISCMirror{Operators: []ISCOperator{{Catalog: cat.Image,
		Packages: []ISCPackage{{Name: "alpha-op"}, {Name: "beta-op", DefaultChannel: "v1", Channels: []ISCPackageChannel{{Name: "v1"}}}}}}}}
	o := e.opts()
	res, err := Resolve(ctx(t), isc, Dest{Host: e.dst.Host, Namespace: "mirror"}, o)
	if err != nil {
		t.Fatal(err)
	}
	cr, err := Copy(ctx(t), res.Images, o)
	if err != nil {
		t.Fatal(err)
	}
	cats, _, err := Catalogs(ctx(t), res, cr.Images, o)
	if err != nil {
		t.Fatal(err)
	}
	// extract /configs as the container sees it: the top layer's opaque whiteout hides the rest
	dir := t.TempDir()
	rc, _ := newClient(o)
	r, _ := ref.New(cats[0].Image)
	err = scanImageFiles(ctx(t), rc, r, "linux/amd64", func(n string) bool { return strings.HasPrefix(n, "configs/") },
		func(n string, rd io.Reader) (bool, error) {
			p := filepath.Join(dir, n)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return false, err
			}
			data, err := io.ReadAll(rd)
			if err != nil {
				return false, err
			}
			return true, os.WriteFile(p, data, 0o644)
		})
	if err != nil {
		t.Fatal(err)
	}
	// opm validate, then opm serve until it accepts connections (what a CatalogSource pod does)
	mirrortest.Serves(t, opm, filepath.Join(dir, "configs"))
}
