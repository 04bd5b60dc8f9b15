package mirror

import (
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
