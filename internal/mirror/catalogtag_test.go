package mirror

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/regclient/regclient/types/ref"
)

// TestDigestPinnedCatalogTagsNeverMove mirrors two digests of one catalog (the tag v4.16 rebuilt
// at the source in between), each pinned by digest in the ISC, into one destination: each is
// pushed under oc-mirror's sha256-<hex> tag and named cs-<repo>-sha256-<5 hex>, the second run
// adds its tag beside the first, and the first tag still names the image the first run pushed (a
// cluster's CatalogSource using it sees no change). A whole catalog pinned by digest is copied
// under the same rule, unchanged.
func TestDigestPinnedCatalogTagsNeverMove(t *testing.T) {
	e := newEnv(t, nil)
	spec := testCatalogSpec(e.src.Host)
	cat1, err := e.b.Catalog(ctx(t), spec)
	if err != nil {
		t.Fatal(err)
	}
	spec.Packages[0].Channels["stable"] = append(spec.Packages[0].Channels["stable"], "1.2.1")
	cat2, err := e.b.Catalog(ctx(t), spec)
	if err != nil {
		t.Fatal(err)
	}
	if cat1.Digest == cat2.Digest {
		t.Fatal("the rebuilt catalog has the digest of the first")
	}
	repo := e.src.Host + "/redhat/redhat-operator-index"
	dir := t.TempDir()
	run := func(entry string) CatalogOut {
		t.Helper()
		isc := filepath.Join(t.TempDir(), "isc.yaml")
		doc := "apiVersion: mirror.openshift.io/v2alpha1\nkind: ImageSetConfiguration\nmirror:\n  operators:\n" + entry
		if err := os.WriteFile(isc, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg, err := LoadISC(isc)
		if err != nil {
			t.Fatal(err)
		}
		o := e.opts()
		res, err := Resolve(ctx(t), cfg, Dest{Host: e.dst.Host, Namespace: "mirror"}, o)
		if err != nil {
			t.Fatal(err)
		}
		cr, err := Copy(ctx(t), res.Images, o)
		if err != nil {
			t.Fatal(err)
		}
		cats, catImages, err := Catalogs(ctx(t), res, cr.Images, o)
		if err != nil || len(cats) != 1 {
			t.Fatalf("catalogs %+v: %v", cats, err)
		}
		outs, err := WriteOutputs(dir, Content{Images: append(cr.Images, catImages...), Catalogs: cats})
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{cats[0].Name + ".yaml"}; !slices.Equal(outs.CatalogSources, want) {
			t.Errorf("CatalogSource files %v, want %v (an earlier run's removed)", outs.CatalogSources, want)
		}
		return cats[0]
	}
	hex := func(d string) string { return strings.TrimPrefix(d, "sha256:") }
	dest := e.dst.Host + "/mirror/redhat/redhat-operator-index"
	rc := e.dstClient(t)
	tagDigest := func(r string) string {
		t.Helper()
		rr, _ := ref.New(r)
		m, err := rc.ManifestHead(ctx(t), rr)
		if err != nil {
			t.Fatalf("%s: %v", r, err)
		}
		return m.GetDescriptor().Digest.String()
	}

	first := run("  - catalog: " + repo + "@" + cat1.Digest + "\n    packages:\n    - name: alpha-op\n")
	if want := "cs-redhat-operator-index-sha256-" + hex(cat1.Digest)[:5]; first.Name != want {
		t.Errorf("first CatalogSource %q, want oc-mirror's %q", first.Name, want)
	}
	tag1 := dest + ":sha256-" + hex(cat1.Digest)
	pushed1 := tagDigest(tag1)
	if first.Image != dest+"@"+pushed1 {
		t.Errorf("first CatalogSource image %s, want the image under %s (%s)", first.Image, tag1, pushed1)
	}

	second := run("  - catalog: " + repo + "@" + cat2.Digest + "\n    packages:\n    - name: alpha-op\n")
	if want := "cs-redhat-operator-index-sha256-" + hex(cat2.Digest)[:5]; second.Name != want || second.Name == first.Name {
		t.Errorf("second CatalogSource %q, want %q, not the first's", second.Name, want)
	}
	tag2 := dest + ":sha256-" + hex(cat2.Digest)
	if pushed2 := tagDigest(tag2); pushed2 == pushed1 || second.Image != dest+"@"+pushed2 {
		t.Errorf("second run pushed %s (first %s), CatalogSource image %s", pushed2, pushed1, second.Image)
	}
	if got := tagDigest(tag1); got != pushed1 {
		t.Errorf("the second run moved %s from %s to %s", tag1, pushed1, got)
	}
	rr, _ := ref.New(dest)
	tl, err := rc.TagList(ctx(t), rr)
	if err != nil {
		t.Fatal(err)
	}
	tags, _ := tl.GetTags()
	slices.Sort(tags)
	want := []string{"sha256-" + hex(cat1.Digest), "sha256-" + hex(cat2.Digest)}
	slices.Sort(want)
	if !slices.Equal(tags, want) {
		t.Errorf("destination tags %v, want %v (no latest, nothing moved)", tags, want)
	}

	whole := run("  - catalog: " + repo + "@" + cat1.Digest + "\n    full: true\n    targetCatalog: whole/redhat-operator-index\n")
	wholeTag := e.dst.Host + "/mirror/whole/redhat-operator-index:sha256-" + hex(cat1.Digest)
	if got := tagDigest(wholeTag); got != cat1.Digest || whole.Name != "cs-redhat-operator-index-sha256-"+hex(cat1.Digest)[:5] {
		t.Errorf("whole catalog: %s holds %s (want the source %s), CatalogSource %q", wholeTag, got, cat1.Digest, whole.Name)
	}
}
