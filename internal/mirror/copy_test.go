package mirror

import (
	"errors"
	"path/filepath"
	"sync"
	"testing"

	"github.com/regclient/regclient"
	"github.com/regclient/regclient/types/ref"
)

func TestCopyDedupResumeAndNothingToDo(t *testing.T) {
	e := newEnv(t, nil)
	refs, err := e.b.Sample(ctx(t), e.src.Host, 64)
	if err != nil {
		t.Fatal(err)
	}
	images, err := Images(refs, KindAdditional, "", e.dst.Host, "mirror")
	if err != nil {
		t.Fatal(err)
	}
	o := e.opts()
	plan, err := Plan(ctx(t), images, o)
	if err != nil {
		t.Fatal(err)
	}
	if plan.SavedBytes <= 0 || plan.ToCopyBytes != plan.UniqueBytes {
		t.Fatalf("plan: want dedup savings and nothing present, got %+v", plan)
	}
	if got := e.srcCount.blobGets.Load(); got != 0 {
		t.Fatalf("plan fetched %d blobs; it must read manifests only", got)
	}

	var mu sync.Mutex
	var last Progress
	var done []ImageResult
	o.Progress = func(p Progress) { mu.Lock(); last = p; mu.Unlock() }
	o.ImageDone = func(r ImageResult) { mu.Lock(); done = append(done, r); mu.Unlock() }
	res, err := Copy(ctx(t), images, o)
	if err != nil {
		t.Fatal(err)
	}
	if got := e.srcCount.blobBytes.Load(); got != plan.UniqueBytes {
		t.Errorf("bytes read from source = %d, want the unique bytes %d (total with repeats %d)", got, plan.UniqueBytes, plan.TotalBytes)
	}
	if res.BytesPulled != plan.UniqueBytes {
		t.Errorf("result BytesPulled = %d, want %d", res.BytesPulled, plan.UniqueBytes)
	}
	if res.BlobsMounted == 0 {
		t.Errorf("no cross-repository mounts; shared base layers should be mounted: %+v", res)
	}
	if last.ImagesDone != len(images) || last.BytesDone != last.BytesTotal || last.BytesTotal != plan.UniqueBytes {
		t.Errorf("final progress %+v, want all %d images and %d bytes", last, len(images), plan.UniqueBytes)
	}
	if last.BlobsTotal == 0 || last.BlobsDone != last.BlobsTotal || last.BlobsTotal != res.BlobsCopied+res.BlobsMounted+res.BlobsPresent {
		t.Errorf("final progress blobs %d/%d, want all done and = copied %d + mounted %d + present %d",
			last.BlobsDone, last.BlobsTotal, res.BlobsCopied, res.BlobsMounted, res.BlobsPresent)
	}
	if len(done) != len(images) {
		t.Errorf("ImageDone called %d times, want %d", len(done), len(images))
	}

	// every image is at the destination under the same digest, children included
	rc := e.dstClient(t)
	for _, im := range res.Images {
		r, _ := ref.New(im.Dest)
		m, err := rc.ManifestHead(ctx(t), r, regclient.WithManifestRequireDigest())
		if err != nil {
			t.Fatalf("%s missing at destination: %v", im.Dest, err)
		}
		if m.GetDescriptor().Digest.String() != im.Digest {
			t.Errorf("%s digest %s, want %s", im.Dest, m.GetDescriptor().Digest, im.Digest)
		}
	}
	vr, err := Verify(ctx(t), Content{Images: res.Images}, o)
	if err != nil || len(vr.Missing) != 0 {
		t.Fatalf("verify after copy: %v %+v", err, vr)
	}

	// second run: nothing to do, no blob fetched, every image skipped
	before, beforeReq := e.srcCount.blobGets.Load(), e.srcCount.requests.Load()
	res2, err := Copy(ctx(t), images, o)
	if err != nil {
		t.Fatal(err)
	}
	if got := e.srcCount.blobGets.Load() - before; got != 0 {
		t.Errorf("second run fetched %d blobs", got)
	}
	// per image: the tag HEAD, the signature tag HEAD, the referrers fallback tag; per repository
	// (3 here) one referrers API probe (distribution answers 404, regclient remembers it); a ping
	if got := e.srcCount.requests.Load() - beforeReq; got > int64(3*len(images)+3+2) {
		t.Errorf("second run sent %d requests to the source, want at most three per image, one per repository and a ping", got)
	}
	for _, im := range res2.Images {
		if !im.Skipped {
			t.Errorf("second run copied %s again", im.Source)
		}
	}
}

func TestCopyMissingImageIsListedAndRestMirrored(t *testing.T) {
	e := newEnv(t, nil)
	refs, err := e.b.Sample(ctx(t), e.src.Host, 8)
	if err != nil {
		t.Fatal(err)
	}
	refs = append(refs, e.src.Host+"/ocp/ghost:v9")
	images, _ := Images(refs, KindAdditional, "", e.dst.Host, "")
	res, err := Copy(ctx(t), images, e.opts())
	var fe *FailedError
	if !errors.As(err, &fe) {
		t.Fatalf("want *FailedError, got %v", err)
	}
	if len(fe.Failed) != 1 || fe.Failed[0].Source != e.src.Host+"/ocp/ghost:v9" {
		t.Fatalf("failed list %+v, want only the ghost image", fe.Failed)
	}
	ok := 0
	for _, im := range res.Images {
		if im.Error == "" {
			ok++
		}
	}
	if ok != len(refs)-1 {
		t.Errorf("%d images mirrored, want %d", ok, len(refs)-1)
	}
}

// A disk mirror asks DiskCheck, before writing anything, for the bytes its layout lacks; a
// refusal copies nothing, and once the layout is complete the need is zero.
func TestCopyToDirDiskCheck(t *testing.T) {
	e := newEnv(t, nil)
	refs, err := e.b.Sample(ctx(t), e.src.Host, 8)
	if err != nil {
		t.Fatal(err)
	}
	images, _ := Images(refs, KindAdditional, "", "archive", "")
	o := e.opts()
	o.Dest.Dir = filepath.Join(t.TempDir(), "layout")
	plan, err := Plan(ctx(t), images, o)
	if err != nil {
		t.Fatal(err)
	}
	var asked []int64
	o.DiskCheck = func(dir string, need int64) error {
		asked = append(asked, need)
		return errors.New("disk full")
	}
	if _, err := Copy(ctx(t), images, o); err == nil || err.Error() != "disk full" {
		t.Fatalf("Copy with a refusing disk check: %v", err)
	}
	if len(asked) != 1 || asked[0] != plan.UniqueBytes {
		t.Fatalf("disk check asked %v, want once with the unique bytes %d", asked, plan.UniqueBytes)
	}
	if got := e.srcCount.blobGets.Load(); got != 0 {
		t.Errorf("%d blobs fetched although the disk check refused", got)
	}
	o.DiskCheck = func(dir string, need int64) error { asked = append(asked, need); return nil }
	if _, err := Copy(ctx(t), images, o); err != nil {
		t.Fatal(err)
	}
	// the same image under another name: its manifest and blobs are in the layout already
	o.DiskCheck = func(dir string, need int64) error { asked = append(asked, need); return nil }
	if _, err := Copy(ctx(t), append(images[:0:0], Image{Source: refs[0], Dest: "archive/x:1", Kind: KindAdditional}), o); err != nil {
		t.Fatal(err)
	}
	if asked[len(asked)-1] != 0 {
		t.Errorf("need with every blob in the layout = %d, want 0", asked[len(asked)-1])
	}
}
