package mirror

import (
	"fmt"
	"strings"
	"testing"

	"github.com/regclient/regclient"
	"github.com/regclient/regclient/types/ref"
)

// TestSignaturesTravelWithImages: cosign sha256-<digest>.sig tags are mirrored with the images
// they sign, and an unsigned image gets none.
func TestSignaturesTravelWithImages(t *testing.T) {
	e := newEnv(t, nil)
	refs, err := e.b.Sample(ctx(t), e.src.Host, 4)
	if err != nil {
		t.Fatal(err)
	}
	rcSrc := e.b.RC
	signed := map[string]string{} // dest sig ref -> source image
	for _, s := range refs[:2] {
		r, _ := ref.New(s)
		m, err := rcSrc.ManifestHead(ctx(t), r, regclient.WithManifestRequireDigest())
		if err != nil {
			t.Fatal(err)
		}
		repo := r.Registry + "/" + r.Repository
		d := m.GetDescriptor().Digest.String()
		if _, err := e.b.Sign(ctx(t), repo, d); err != nil {
			t.Fatal(err)
		}
		signed[e.dst.Host+"/"+r.Repository+":"+strings.Replace(d, ":", "-", 1)+".sig"] = s
	}
	images, _ := Images(refs, KindAdditional, "", e.dst.Host, "")
	res, err := Copy(ctx(t), images, e.opts())
	if err != nil {
		t.Fatal(err)
	}
	sigs := 0
	for _, im := range res.Images {
		if im.Kind == KindSignature {
			sigs++
			if _, ok := signed[im.Dest]; !ok {
				t.Errorf("unexpected signature %s", im.Dest)
			}
		}
	}
	if sigs != 2 {
		t.Fatalf("%d signatures mirrored, want 2", sigs)
	}
	rc := e.dstClient(t)
	for d := range signed {
		r, _ := ref.New(d)
		if _, err := rc.ManifestHead(ctx(t), r); err != nil {
			t.Errorf("signature %s missing at destination: %v", d, err)
		}
	}
}

// TestReferrersTravelWithImages: OCI referrers (an SBOM and a signature artifact whose subject is
// the image) are listed in the plan, mirrored with the image and found through the referrers
// listing at the destination (distribution has no referrers API: both ends use the sha256-<hex>
// fallback tag); a second run has nothing to do.
func TestReferrersTravelWithImages(t *testing.T) {
	e := newEnv(t, nil)
	refs, err := e.b.Sample(ctx(t), e.src.Host, 4)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{} // source image -> referrer digests
	for i, s := range refs[:2] {
		r, _ := ref.New(s)
		m, err := e.b.RC.ManifestHead(ctx(t), r, regclient.WithManifestRequireDigest())
		if err != nil {
			t.Fatal(err)
		}
		repo := r.Registry + "/" + r.Repository
		for j, at := range []string{"application/spdx+json", "application/vnd.dev.sigstore.bundle.v0.3+json"}[:2-i] {
			d, err := e.b.Attach(ctx(t), repo, m.GetDescriptor().Digest.String(), at, []byte(fmt.Sprintf("artifact %d %d", i, j)))
			if err != nil {
				t.Fatal(err)
			}
			want[s] = append(want[s], d.Digest.String())
		}
	}
	images, _ := Images(refs, KindAdditional, "", e.dst.Host, "mirror")
	o := e.opts()
	plan, err := Plan(ctx(t), images, o)
	if err != nil {
		t.Fatal(err)
	}
	planned := 0
	for _, im := range plan.Images {
		if im.Kind == KindReferrer {
			planned++
		}
	}
	if planned != 3 {
		t.Errorf("plan lists %d referrers, want 3", planned)
	}
	res, err := Copy(ctx(t), images, o)
	if err != nil {
		t.Fatal(err)
	}
	rc := e.dstClient(t)
	for _, im := range res.Images {
		ws, ok := want[im.Source]
		if !ok {
			continue
		}
		dr, _ := ref.New(im.Dest)
		rl, err := rc.ReferrerList(ctx(t), dr.SetDigest(im.Digest))
		if err != nil {
			t.Fatalf("referrers of %s at the destination: %v", im.Dest, err)
		}
		got := map[string]bool{}
		for _, d := range rl.Descriptors {
			got[d.Digest.String()] = true
		}
		for _, w := range ws {
			if !got[w] {
				t.Errorf("%s: referrer %s not listed at the destination (got %v)", im.Dest, w, got)
			}
		}
	}
	res2, err := Copy(ctx(t), images, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, im := range res2.Images {
		if !im.Skipped {
			t.Errorf("second run copied %s (%s) again", im.Source, im.Kind)
		}
	}
	if n := len(res2.Images); n != len(res.Images) {
		t.Errorf("second run saw %d images, the first %d", n, len(res.Images))
	}
}
