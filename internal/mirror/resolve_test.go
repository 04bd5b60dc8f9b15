package mirror

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/regclient/regclient/types/manifest"
	"github.com/regclient/regclient/types/ref"

	"github.com/bootstrap-dev/bootstrap/internal/mirror/mirrortest"
)

func testCatalogSpec(host string) mirrortest.CatalogSpec {
	return mirrortest.CatalogSpec{PushHost: host, Repo: "redhat/redhat-operator-index", Tag: "v4.16", LayerKiB: 4,
		Packages: []mirrortest.PackageSpec{
			{Name: "alpha-op", DefaultChannel: "stable", Channels: map[string][]string{
				"stable": {"1.0.0", "1.1.0", "1.2.0"}, "fast": {"1.2.0", "1.3.0-rc.1"}}, Deprecated: []string{"1.0.0"}},
			{Name: "beta-op", DefaultChannel: "v2", Channels: map[string][]string{
				"v1": {"1.0.0", "1.0.1"}, "v2": {"2.0.0", "2.1.0", "2.2.0"}}},
			{Name: "gamma-op", DefaultChannel: "stable", Channels: map[string][]string{"stable": {"0.1.0"}}},
		}}
}

// TestReadCatalogAndFilter reads a catalog image from a registry (never its opm base layer) and
// filters what it read with oc-mirror's rules (TestFilterRules pins them all on synthetic catalogs).
func TestReadCatalogAndFilter(t *testing.T) {
	e := newEnv(t, nil)
	cat, err := e.b.Catalog(ctx(t), testCatalogSpec(e.src.Host))
	if err != nil {
		t.Fatal(err)
	}
	before := e.srcCount.blobGets.Load()
	c, err := ReadCatalog(ctx(t), cat.Image, "linux/amd64", e.opts())
	if err != nil {
		t.Fatal(err)
	}
	// config, cache layer, configs layer: the opm base layer is never read
	if got := e.srcCount.blobGets.Load() - before; got != 3 {
		t.Errorf("reading the catalog fetched %d blobs, want 3 (config, cache, configs)", got)
	}
	only, err := ReadCatalog(ctx(t), cat.Image, "linux/amd64", e.opts(), "beta-op")
	if err != nil {
		t.Fatal(err)
	}
	if len(only.Packages) != 1 || len(only.Bundles) != 5 || len(only.Channels) != 2 {
		t.Errorf("reading only beta-op kept %d packages, %d channels, %d bundles; want 1, 2, 5", len(only.Packages), len(only.Channels), len(only.Bundles))
	}
	tests := []struct {
		name string
		op   ISCOperator
		want string
	}{
		{"catalog only: the head of every channel", ISCOperator{},
			"alpha-op default=stable\nalpha-op/fast: 1.3.0-rc.1\nalpha-op/stable: 1.2.0\nbeta-op default=v2\nbeta-op/v1: 1.0.1\nbeta-op/v2: 2.2.0\n" +
				"bundles: 0.1.0 1.0.1 1.2.0 1.3.0-rc.1 2.2.0\ngamma-op default=stable\ngamma-op/stable: 0.1.0"},
		{"package minVersion: every channel, emptied ones dropped", ISCOperator{Packages: []ISCPackage{{Name: "beta-op", MinVersion: "2.1.0"}}},
			"beta-op default=v2\nbeta-op/v2: 2.1.0 2.2.0\nbundles: 2.1.0 2.2.0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.op.Catalog = cat.Image
			f, err := FilterCatalog(ctx(t), c, tt.op, nil, "mirror.operators[0]")
			if err != nil {
				t.Fatal(err)
			}
			if got, want := summary(f.DC), sortLines(tt.want); got != want {
				t.Errorf("got:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

// TestResolveAndMirrorISC resolves a release of 20 components, a filtered catalog and an additional
// image from an ImageSetConfiguration, mirrors them, writes the outputs and proves completeness.
func TestResolveAndMirrorISC(t *testing.T) {
	e := newEnv(t, nil)
	rel, err := e.b.Release(ctx(t), mirrortest.ReleaseSpec{PushHost: e.src.Host, Version: "4.16.3", Components: 20, LayerKiB: 8})
	if err != nil {
		t.Fatal(err)
	}
	cat, err := e.b.Catalog(ctx(t), testCatalogSpec(e.src.Host))
	if err != nil {
		t.Fatal(err)
	}
	extra, err := e.b.Sample(ctx(t), e.src.Host, 4)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	isc := filepath.Join(dir, "isc.yaml")
	doc := `apiVersion: mirror.openshift.io/v2alpha1
kind: ImageSetConfiguration
mirror:
  platform:
    release: ` + rel.Image + `
  operators:
  - catalog: ` + cat.Image + `
    packages:
    - name: alpha-op
    - name: beta-op
      defaultChannel: v1
      channels:
      - name: v1
  additionalImages:
  - name: ` + extra[0] + `
  - name: ` + extra[3] + `
  blockedImages:
  - name: ` + strings.Split(extra[3], ":")[0] + ":" + strings.Split(extra[3], ":")[1] + `
`
	if err := os.WriteFile(isc, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadISC(isc)
	if err != nil {
		t.Fatal(err)
	}
	before := e.srcCount.blobGets.Load()
	res, err := Resolve(ctx(t), cfg, Dest{Host: e.dst.Host, Namespace: "mirror"}, e.opts())
	if err != nil {
		t.Fatal(err)
	}
	// release: only the payload layer; catalog: config, cache and configs layers, and the configs
	// layer again for the full documents of the selected bundles (memory follows the selection)
	if got := e.srcCount.blobGets.Load() - before; got != 5 {
		t.Errorf("resolution fetched %d blobs, want 5", got)
	}
	kinds := map[Kind]int{}
	for _, im := range res.Images {
		kinds[im.Kind]++
	}
	// alpha-op: the heads of stable (1.2.0) and fast (1.3.0-rc.1); beta-op v1 head 1.0.1:
	// 3 bundles, 3 operator images; the catalog is filtered: it is rebuilt after the copy, not copied
	want := map[Kind]int{KindRelease: 1, KindReleaseComponent: 20, KindCatalog: 0, KindBundle: 3, KindRelated: 3, KindAdditional: 1}
	for k, n := range want {
		if kinds[k] != n {
			t.Errorf("%d images of kind %s, want %d (all: %v)", kinds[k], k, n, kinds)
		}
	}
	if len(res.Blocked) != 1 {
		t.Errorf("blocked %v, want the one blocked additional image", res.Blocked)
	}

	o := e.opts()
	cr, err := Copy(ctx(t), res.Images, o)
	if err != nil {
		t.Fatal(err)
	}
	cats, catImages, err := Catalogs(ctx(t), res, cr.Images, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(cats) != 1 || len(catImages) != 1 || !strings.HasPrefix(cats[0].Image, e.dst.Host+"/mirror/redhat/redhat-operator-index@sha256:") {
		t.Fatalf("catalogs %+v %+v", cats, catImages)
	}
	checkFilteredCatalog(t, e, cats[0].Image, o)
	content := Content{Images: append(cr.Images, catImages...), Catalogs: cats}
	outs, err := WriteOutputs(dir, content)
	if err != nil {
		t.Fatal(err)
	}
	idms, _ := os.ReadFile(filepath.Join(dir, outs.IDMS))
	for _, s := range []string{"kind: ImageDigestMirrorSet", e.src.Host + "/openshift-release-dev/ocp-v4.0-art-dev",
		e.dst.Host + "/mirror/openshift-release-dev/ocp-v4.0-art-dev", e.src.Host + "/operators/alpha-op-bundle"} {
		if !strings.Contains(string(idms), s) {
			t.Errorf("%s lacks %q:\n%s", outs.IDMS, s, idms)
		}
	}
	if outs.ITMS == "" || len(outs.CatalogSources) != 1 {
		t.Errorf("outputs %+v: want an ITMS for the tag-only additional image and one CatalogSource", outs)
	}
	back, err := ReadContent(filepath.Join(dir, outs.Content))
	if err != nil {
		t.Fatal(err)
	}
	vr, err := Verify(ctx(t), back, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(vr.Missing) != 0 || vr.Images != len(res.Images)+1 {
		t.Fatalf("verify: %+v", vr)
	}
	// a catalog advertising an image that was never mirrored is caught
	back.Catalogs[0].Advertised = append(back.Catalogs[0].Advertised, e.src.Host+"/operators/ghost@sha256:"+strings.Repeat("0", 64))
	vr, _ = Verify(ctx(t), back, o)
	if len(vr.Missing) != 1 {
		t.Fatalf("verify with an unmirrored advertised image: %+v", vr.Missing)
	}
}

// checkFilteredCatalog reads the rebuilt catalog back from the destination: only the selected
// packages, channels and bundles, deprecations of dropped bundles gone, no opm cache arguments.
// With OPM set, the real opm validates and serves it.
func checkFilteredCatalog(t *testing.T, e *testEnv, image string, o Options) {
	t.Helper()
	c, err := ReadCatalog(ctx(t), image, "linux/amd64", o)
	if err != nil {
		t.Fatal(err)
	}
	want := "alpha-op default=stable\nalpha-op/fast: 1.3.0-rc.1\nalpha-op/stable: 1.2.0\nbeta-op default=v1\nbeta-op/v1: 1.0.1\nbundles: 1.0.1 1.2.0 1.3.0-rc.1"
	if got := summary(c); got != sortLines(want) {
		t.Errorf("filtered catalog (the deprecation of alpha-op 1.0.0 dropped with the bundle):\n%s\nwant:\n%s", got, sortLines(want))
	}
	rc := e.dstClient(t)
	r, _ := ref.New(image)
	m, err := rc.ManifestGet(ctx(t), r)
	if err != nil {
		t.Fatal(err)
	}
	cd, _ := m.(manifest.Imager).GetConfig()
	cfg, err := rc.BlobGetOCIConfig(ctx(t), r, cd)
	if err != nil {
		t.Fatal(err)
	}
	if cmd := strings.Join(cfg.GetConfig().Config.Cmd, " "); cmd != "serve /configs" {
		t.Errorf("filtered catalog command %q, want the cache arguments dropped", cmd)
	}
	if opm := mirrortest.OPM(); opm != "" {
		dir := filepath.Join(t.TempDir(), "configs")
		if n, err := mirrortest.TopLayerFiles(ctx(t), rc, image, "configs/", dir); err != nil || n == 0 {
			t.Fatalf("extract the filtered configs: %d files, %v", n, err)
		}
		mirrortest.Serves(t, opm, dir)
	}
}
