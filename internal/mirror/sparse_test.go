package mirror

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/regclient/regclient"
	"github.com/regclient/regclient/types/manifest"
	"github.com/regclient/regclient/types/ref"

	"github.com/bootstrap-dev/bootstrap/internal/mirror/mirrortest"
)

// refusals counts the manifest pushes a registry answered with 400 and closes first at the first one.
type refusals struct {
	n     atomic.Int64
	once  sync.Once
	first chan struct{}
	// indexDelay slows every index push down (pushes in flight at once overlap at the registry)
	indexDelay time.Duration
}

func (r *refusals) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodPut || !strings.Contains(req.URL.Path, "/manifests/") {
			h.ServeHTTP(w, req)
			return
		}
		if r.indexDelay > 0 && strings.Contains(req.Header.Get("Content-Type"), "index") {
			time.Sleep(r.indexDelay)
		}
		code := http.StatusOK
		h.ServeHTTP(&statusHook{ResponseWriter: w, onStatus: func(c int) { code = c }}, req)
		if code == http.StatusBadRequest {
			r.n.Add(1)
			r.once.Do(func() { close(r.first) })
		}
	})
}

// startDest replaces the env's destination with one that counts refused manifest pushes and,
// with sparse platforms, accepts indexes whose other children are absent.
func startDest(t *testing.T, e *testEnv, sparse ...string) *refusals {
	return startDestCounting(t, e, &refusals{first: make(chan struct{})}, sparse...)
}

func startDestCounting(t *testing.T, e *testEnv, r *refusals, sparse ...string) *refusals {
	t.Helper()
	dst, err := mirrortest.StartRegistry(mirrortest.RegistryOptions{Dir: t.TempDir(), TLS: true, User: "robot", Password: "s3cret",
		Wrap: r.wrap, SparseIndexes: sparse})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(dst.Close)
	e.dst = dst
	return r
}

// multiArch pushes app/one (amd64+arm64) and app/two (amd64+arm64+ppc64le) indexes and a plain
// amd64 image app/three, returning their references and the bytes of the layers only the
// non-amd64 children use.
func multiArch(t *testing.T, e *testEnv) (refs []string, otherLayers []mirrortest.Blob) {
	t.Helper()
	base := e.b.Layer(4000)
	a1, a2, b1, b2, b3 := e.b.Layer(3000), e.b.Layer(3100), e.b.Layer(5000), e.b.Layer(5100), e.b.Layer(5200)
	specs := map[string][]mirrortest.ImageSpec{
		"app/one": {{Layers: []mirrortest.Blob{base, a1}}, {Layers: []mirrortest.Blob{base, b1}, Platform: "linux/arm64"}},
		"app/two": {{Layers: []mirrortest.Blob{base, a2}}, {Layers: []mirrortest.Blob{base, b2}, Platform: "linux/arm64"},
			{Layers: []mirrortest.Blob{b3}, Platform: "linux/ppc64le"}},
	}
	for _, repo := range []string{"app/one", "app/two"} {
		if _, err := e.b.Index(ctx(t), e.src.Host+"/"+repo, "v1", specs[repo]); err != nil {
			t.Fatal(err)
		}
		refs = append(refs, e.src.Host+"/"+repo+":v1")
	}
	if _, err := e.b.Image(ctx(t), e.src.Host+"/app/three", "v1", mirrortest.ImageSpec{Layers: []mirrortest.Blob{base, e.b.Layer(2000)}}); err != nil {
		t.Fatal(err)
	}
	return append(refs, e.src.Host+"/app/three:v1"), []mirrortest.Blob{b1, b2, b3}
}

// children returns the index's children at r (a tag or digest) as references by digest.
func children(t *testing.T, rc *regclient.RegClient, r ref.Ref) (string, []ref.Ref) {
	t.Helper()
	m, err := rc.ManifestGet(ctx(t), r)
	if err != nil {
		t.Fatalf("%s: %v", r.CommonName(), err)
	}
	ix, ok := m.(manifest.Indexer)
	if !ok {
		t.Fatalf("%s is not an index", r.CommonName())
	}
	list, _ := ix.GetManifestList()
	var out []ref.Ref
	for _, d := range list {
		out = append(out, r.SetDigest(d.Digest.String()))
	}
	return m.GetDescriptor().Digest.String(), out
}

// TestSparseIndexRefusedFallsBack: distribution with its default configuration refuses a
// platform-filtered index. The copy falls back to every platform (one refused push per run and
// host, not per image), the index keeps its digest, the plan predicted the bytes, and a second
// run copies nothing.
func TestSparseIndexRefusedFallsBack(t *testing.T) {
	// during the copy, app/two resolves only after the first refusal: it must not be refused again
	ref400 := &refusals{first: make(chan struct{})}
	var gated atomic.Bool
	e := newEnv(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.Contains(r.URL.Path, "/app/two/manifests/") && gated.Load() {
				select {
				case <-ref400.first:
				case <-time.After(10 * time.Second):
				}
			}
			h.ServeHTTP(w, r)
		})
	})
	refs, other := multiArch(t, e)
	startDestCounting(t, e, ref400)
	images, o, plan := planAMD64(t, e, refs)
	var otherBytes int64
	for _, b := range other {
		otherBytes += int64(len(b.Data))
	}
	if plan.FilteredPlatforms != 3 {
		t.Errorf("plan: %d platforms filtered, want 3", plan.FilteredPlatforms)
	}
	// the fallback adds the left-out layers and configs (each config a few hundred bytes)
	if plan.SparseFallbackBytes < otherBytes || plan.SparseFallbackBytes > otherBytes+3*1024 {
		t.Errorf("plan: sparse fallback %d bytes, want the left-out layers (%d) and configs", plan.SparseFallbackBytes, otherBytes)
	}

	gated.Store(true)
	var mu sync.Mutex
	done := map[string]ImageResult{}
	o.ImageDone = func(r ImageResult) { mu.Lock(); done[r.Source] = r; mu.Unlock() }
	res, err := Copy(ctx(t), images, o)
	if err != nil {
		t.Fatal(err)
	}
	if got := ref400.n.Load(); got != 1 {
		t.Errorf("destination refused %d index pushes, want 1 (later indexes of the run go straight to a full copy)", got)
	}
	if got := e.srcCount.blobBytes.Load(); got != plan.ToCopyBytes+plan.SparseFallbackBytes {
		t.Errorf("read %d bytes from the source, want the plan's %d to copy + %d fallback", got, plan.ToCopyBytes, plan.SparseFallbackBytes)
	}
	if len(res.SparseRefused) != 1 || res.SparseRefused[0] != e.dst.Host {
		t.Errorf("SparseRefused = %v, want [%s]", res.SparseRefused, e.dst.Host)
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "FEATURE_SPARSE_INDEX") || !strings.Contains(res.Warnings[0], "mirror.platforms: [all]") ||
		!strings.Contains(res.Warnings[0], "2 multi-arch image(s)") || !strings.Contains(res.Warnings[0], "3 more platform images") {
		t.Errorf("warnings = %q, want one naming the cost and both ways to avoid it", res.Warnings)
	}
	wantExtra := map[string]int{refs[0]: 1, refs[1]: 2, refs[2]: 0}
	for _, ir := range res.Images {
		if ir.ExtraPlatforms != wantExtra[ir.Source] || ir.SparseRefused != (wantExtra[ir.Source] > 0) || (ir.ExtraBytes > 0) != ir.SparseRefused {
			t.Errorf("%s: sparseRefused %v, %d extra platforms, %d extra bytes; want %d platforms", ir.Source, ir.SparseRefused, ir.ExtraPlatforms, ir.ExtraBytes, wantExtra[ir.Source])
		}
		if d := done[ir.Source]; d.SparseRefused != ir.SparseRefused || d.ExtraPlatforms != ir.ExtraPlatforms {
			t.Errorf("%s: ImageDone reported %+v, result %+v", ir.Source, d, ir)
		}
	}
	// the index kept its digest and every child is there
	src := e.b.RC
	dst := e.dstClient(t)
	for _, r := range refs[:2] {
		sr, _ := ref.New(r)
		dr, _ := ref.New(e.dst.Host + "/mirror/" + sr.Repository + ":v1")
		sd, skids := children(t, src, sr)
		dd, dkids := children(t, dst, dr)
		if sd != dd {
			t.Errorf("%s: digest at the destination %s, source %s", r, dd, sd)
		}
		for _, k := range dkids {
			if _, err := dst.ManifestHead(ctx(t), k); err != nil {
				t.Errorf("%s: child %s missing at the destination: %v", r, k.Digest, err)
			}
		}
		if len(dkids) != len(skids) {
			t.Errorf("%s: %d children, want %d", r, len(dkids), len(skids))
		}
	}
	vr, err := Verify(ctx(t), Content{Images: res.Images}, o)
	if err != nil || len(vr.Missing) > 0 {
		t.Fatalf("verify: %v %+v", err, vr)
	}

	// second run: nothing to do, nothing refused
	pulled, refused := e.srcCount.blobBytes.Load(), ref400.n.Load()
	res2, err := Copy(ctx(t), images, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, ir := range res2.Images {
		if !ir.Skipped {
			t.Errorf("second run: %s not found present", ir.Source)
		}
	}
	if e.srcCount.blobBytes.Load() != pulled || ref400.n.Load() != refused || len(res2.Warnings) != 0 {
		t.Errorf("second run read %d bytes, had %d refusals, warned %q; want nothing", e.srcCount.blobBytes.Load()-pulled, ref400.n.Load()-refused, res2.Warnings)
	}
}

// TestSparseIndexAccepted: distribution configured to accept sparse indexes
// (validation.manifests.indexes.platforms: list) gets the amd64 children only, under the
// original index digest, and Verify accepts the sparse index.
func TestSparseIndexAccepted(t *testing.T) {
	e := newEnv(t, nil)
	refs, _ := multiArch(t, e)
	ref400 := startDest(t, e, "linux/amd64")
	images, o, plan := planAMD64(t, e, refs)
	res, err := Copy(ctx(t), images, o)
	if err != nil {
		t.Fatal(err)
	}
	if ref400.n.Load() != 0 || len(res.SparseRefused) != 0 || len(res.Warnings) != 0 {
		t.Errorf("%d refusals, refused hosts %v, warnings %q; want none", ref400.n.Load(), res.SparseRefused, res.Warnings)
	}
	if got := e.srcCount.blobBytes.Load(); got != plan.ToCopyBytes {
		t.Errorf("read %d bytes from the source, want only the amd64 blobs (%d)", got, plan.ToCopyBytes)
	}
	src := e.b.RC
	dst := e.dstClient(t)
	for _, r := range refs[:2] {
		sr, _ := ref.New(r)
		dr, _ := ref.New(e.dst.Host + "/mirror/" + sr.Repository + ":v1")
		sd, _ := children(t, src, sr)
		dd, dkids := children(t, dst, dr)
		if sd != dd {
			t.Errorf("%s: digest at the destination %s, source %s", r, dd, sd)
		}
		present := 0
		for _, k := range dkids {
			if _, err := dst.ManifestHead(ctx(t), k); err == nil {
				present++
			}
		}
		if present != 1 {
			t.Errorf("%s: %d of %d children at the destination, want the amd64 one only", r, present, len(dkids))
		}
	}
	vr, err := Verify(ctx(t), Content{Images: res.Images}, o)
	if err != nil || len(vr.Missing) > 0 {
		t.Fatalf("verify of the sparse indexes: %v %+v", err, vr)
	}
	// without the platform filter, the same check must see the left-out children missing
	all := o
	all.Platforms = []string{PlatformsAll}
	if vr, err := Verify(ctx(t), Content{Images: res.Images}, all); err != nil || len(vr.Missing) != 3 {
		t.Fatalf("verify with all platforms: %v, %d missing, want the 3 left-out children", err, len(vr.Missing))
	}
}

// TestMultiArchReleaseResolveAndCopy: a multi-arch release index through Resolve and Copy with
// the default platform filter into distribution's default configuration.
func TestMultiArchReleaseResolveAndCopy(t *testing.T) {
	e := newEnv(t, nil)
	rel, err := e.b.Release(ctx(t), mirrortest.ReleaseSpec{PushHost: e.src.Host, Version: "4.16.3", Components: 5, LayerKiB: 4, Multi: true})
	if err != nil {
		t.Fatal(err)
	}
	isc := filepath.Join(t.TempDir(), "isc.yaml")
	doc := "apiVersion: mirror.openshift.io/v2alpha1\nkind: ImageSetConfiguration\nmirror:\n  platform:\n    release: " + rel.Image + "\n"
	if err := os.WriteFile(isc, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadISC(isc)
	if err != nil {
		t.Fatal(err)
	}
	o := e.opts()
	o.Platforms = []string{"linux/amd64"}
	rs, err := Resolve(ctx(t), cfg, Dest{Host: e.dst.Host, Namespace: "mirror"}, o)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Copy(ctx(t), rs.Images, o)
	if err != nil {
		t.Fatal(err)
	}
	var relRes *ImageResult
	for i, ir := range res.Images {
		if ir.Kind == KindRelease {
			relRes = &res.Images[i]
		}
	}
	if relRes == nil || relRes.Digest != rel.Digest || !relRes.SparseRefused || relRes.ExtraPlatforms != 1 {
		t.Fatalf("release result %+v, want digest %s copied with its arm64 child after the refusal", relRes, rel.Digest)
	}
	if len(res.Images) != 6 || len(res.Warnings) != 1 {
		t.Errorf("%d images, warnings %q; want 6 and one warning", len(res.Images), res.Warnings)
	}
	vr, err := Verify(ctx(t), Content{Images: res.Images}, o)
	if err != nil || len(vr.Missing) > 0 {
		t.Fatalf("verify: %v %+v", err, vr)
	}
}

// TestSparseDiskMirrorIntoRefusingRegistry: a disk mirror written with a platform filter carries
// only the kept children; loading it into a registry that refuses sparse indexes fails those
// images with the reason and the fix, and still loads the others.
func TestSparseDiskMirrorIntoRefusingRegistry(t *testing.T) {
	e := newEnv(t, nil)
	refs, _ := multiArch(t, e)
	images, _ := Images(refs, KindAdditional, "", "archive", "")
	o := e.opts()
	o.Platforms = []string{"linux/amd64"}
	o.Dest.Dir = filepath.Join(t.TempDir(), "layout")
	res, err := Copy(ctx(t), images, o)
	if err != nil {
		t.Fatal(err)
	}
	push, err := ArchiveImages(Content{Images: res.Images}, e.dst.Host, "site")
	if err != nil {
		t.Fatal(err)
	}
	po := e.opts()
	po.Platforms = []string{"linux/amd64"}
	po.SourceDir = o.Dest.Dir
	res2, err := Copy(ctx(t), push, po)
	var fe *FailedError
	if !errors.As(err, &fe) || len(fe.Failed) != 2 {
		t.Fatalf("loading into a refusing registry: %v, want the 2 multi-arch images failed", err)
	}
	for _, f := range fe.Failed {
		if !strings.Contains(f.Error, "refuses platform-filtered (sparse) indexes") || !strings.Contains(f.Error, "mirror.platforms: [all]") {
			t.Errorf("%s: %s; want the reason and the fix", f.Source, f.Error)
		}
	}
	if len(res2.SparseRefused) != 1 || len(res2.Images) != 3 {
		t.Errorf("refused %v, %d images", res2.SparseRefused, len(res2.Images))
	}
}

// TestSparseRefusedOncePerRun: many indexes finishing at once (one shared amd64 layer) while the
// registry's answer is not known yet, each index push slowed so that pushes in flight would
// overlap: one push finds out, the others wait for its verdict, so the registry sees exactly one
// refused index push in the run.
func TestSparseRefusedOncePerRun(t *testing.T) {
	e := newEnv(t, nil)
	var refs []string
	shared := e.b.Layer(200_000) // every index's amd64 image: they all finish together
	for i := range 12 {
		repo := fmt.Sprintf("%s/app/m%02d", e.src.Host, i)
		specs := []mirrortest.ImageSpec{{Layers: []mirrortest.Blob{shared}, Labels: map[string]string{"i": fmt.Sprint(i)}},
			{Layers: []mirrortest.Blob{e.b.Layer(2000)}, Platform: "linux/arm64"}, {Layers: []mirrortest.Blob{e.b.Layer(2000)}, Platform: "linux/s390x"}}
		if _, err := e.b.Index(ctx(t), repo, "v1", specs); err != nil {
			t.Fatal(err)
		}
		refs = append(refs, repo+":v1")
	}
	r := startDest(t, e)
	r.indexDelay = 300 * time.Millisecond
	images, _ := Images(refs, KindAdditional, "", e.dst.Host, "mirror")
	o := e.opts()
	o.Parallel = 6
	o.Platforms = []string{"linux/amd64"}
	plan, err := Plan(ctx(t), images, o)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Copy(ctx(t), images, o)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.n.Load(); got != 1 {
		t.Errorf("%d refused index pushes, want 1", got)
	}
	if res.BytesPulled != plan.ToCopyBytes+plan.SparseFallbackBytes || plan.FilteredPlatforms != 24 {
		t.Errorf("pulled %d, plan %d + %d fallback (%d platforms filtered)", res.BytesPulled, plan.ToCopyBytes, plan.SparseFallbackBytes, plan.FilteredPlatforms)
	}
	for _, ir := range res.Images {
		if !ir.SparseRefused || ir.ExtraPlatforms != 2 {
			t.Errorf("%s: %+v, want 2 extra platforms", ir.Source, ir)
		}
	}
	if vr, err := Verify(ctx(t), Content{Images: res.Images}, o); err != nil || len(vr.Missing) > 0 {
		t.Fatalf("verify: %v %+v", err, vr)
	}
}

// planAMD64 plans refs as additional images into the env's destination under "mirror", keeping
// linux/amd64 of multi-arch indexes, and returns the images, the options and the plan.
func planAMD64(t *testing.T, e *testEnv, refs []string) ([]Image, Options, *PlanResult) {
	t.Helper()
	images, err := Images(refs, KindAdditional, "", e.dst.Host, "mirror")
	if err != nil {
		t.Fatal(err)
	}
	o := e.opts()
	o.Platforms = []string{"linux/amd64"}
	plan, err := Plan(ctx(t), images, o)
	if err != nil {
		t.Fatal(err)
	}
	return images, o, plan
}
