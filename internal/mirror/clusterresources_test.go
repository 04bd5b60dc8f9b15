package mirror

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// ocMirrorCase is one ImageSetConfiguration's mirror-to-mirror result as bootstrap's copy reports
// it, and the cluster-resources oc-mirror v2 writes for the same ISC. The expected files and
// object names follow openshift/oc-mirror internal/pkg/clusterresources/clusterresources.go:
// IDMS_ITMSGenerator (idms-oc-mirror.yaml and itms-oc-mirror.yaml, each written only when it has
// entries), generateIDMS/generateITMS ("idms-"/"itms-" + release|operator|generic + "-0", one
// object per category with entries), generateImageMirrors (digest sets: by digest, by tag and
// digest, and the release image even by tag; tag sets: every source with a tag; catalogs in
// neither), generateCatalogSource (the file is the CatalogSource's name + ".yaml").
type ocMirrorCase struct {
	name    string
	content Content
	files   []string            // oc-mirror's files (bootstrap's content.json and mapping.txt beside them)
	objects map[string][]string // per file, the object names in it
}

func ocMirrorCases() []ocMirrorCase {
	const (
		src = "quay.io/openshift-release-dev"
		dst = "registry.example.com:8443/mirror"
		d1  = "sha256:1111111111111111111111111111111111111111111111111111111111111111"
		d2  = "sha256:2222222222222222222222222222222222222222222222222222222222222222"
	)
	release := []ImageResult{
		{Image: Image{Source: src + "/ocp-release:4.18.1-x86_64", Dest: dst + "/openshift-release-dev/ocp-release:4.18.1-x86_64", Kind: KindRelease}, Digest: d1},
		{Image: Image{Source: src + "/ocp-v4.0-art-dev@" + d2, Dest: dst + "/openshift-release-dev/ocp-v4.0-art-dev@" + d2, Kind: KindReleaseComponent}, Digest: d2},
	}
	operators := []ImageResult{
		{Image: Image{Source: "registry.redhat.io/redhat/redhat-operator-index:v4.18", Dest: dst + "/redhat/redhat-operator-index:v4.18", Kind: KindCatalog}, Digest: d1},
		{Image: Image{Source: "registry.redhat.io/rhel9/op-bundle@" + d1, Dest: dst + "/rhel9/op-bundle@" + d1, Kind: KindBundle}, Digest: d1},
		{Image: Image{Source: "registry.redhat.io/rhel9/operator@" + d2, Dest: dst + "/rhel9/operator@" + d2, Kind: KindRelated}, Digest: d2},
	}
	catalogs := []CatalogOut{{Name: "cs-redhat-operator-index-v4-18", Source: "registry.redhat.io/redhat/redhat-operator-index:v4.18",
		Image: dst + "/redhat/redhat-operator-index@" + d1}}
	additional := []ImageResult{
		{Image: Image{Source: "registry.redhat.io/ubi9/ubi:latest", Dest: dst + "/ubi9/ubi:latest", Kind: KindAdditional}, Digest: d1},
		{Image: Image{Source: "quay.io/acme/tool@" + d2, Dest: dst + "/acme/tool@" + d2, Kind: KindAdditional}, Digest: d2},
	}
	all := append(append(append([]ImageResult(nil), release...), operators...), additional...)
	return []ocMirrorCase{
		{
			name:    "release by tag, a filtered catalog, additional images by tag and by digest",
			content: Content{Images: all, Catalogs: catalogs},
			files:   []string{"cs-redhat-operator-index-v4-18.yaml", "idms-oc-mirror.yaml", "itms-oc-mirror.yaml"},
			objects: map[string][]string{
				"idms-oc-mirror.yaml":                 {"idms-release-0", "idms-operator-0", "idms-generic-0"},
				"itms-oc-mirror.yaml":                 {"itms-release-0", "itms-generic-0"},
				"cs-redhat-operator-index-v4-18.yaml": {"cs-redhat-operator-index-v4-18"},
			},
		},
		{
			name:    "operators only: every image by digest, no ITMS",
			content: Content{Images: operators, Catalogs: catalogs},
			files:   []string{"cs-redhat-operator-index-v4-18.yaml", "idms-oc-mirror.yaml"},
			objects: map[string][]string{"idms-oc-mirror.yaml": {"idms-operator-0"}, "cs-redhat-operator-index-v4-18.yaml": {"cs-redhat-operator-index-v4-18"}},
		},
		{
			name:    "additional images by tag only: no IDMS",
			content: Content{Images: additional[:1]},
			files:   []string{"itms-oc-mirror.yaml"},
			objects: map[string][]string{"itms-oc-mirror.yaml": {"itms-generic-0"}},
		},
		{
			name:    "a whole catalog only: neither mirror set, the CatalogSource alone",
			content: Content{Images: operators[:1], Catalogs: catalogs},
			files:   []string{"cs-redhat-operator-index-v4-18.yaml"},
			objects: map[string][]string{"cs-redhat-operator-index-v4-18.yaml": {"cs-redhat-operator-index-v4-18"}},
		},
	}
}

// TestOutputsAsOCMirror writes each case's outputs into one directory in turn, as successive runs
// into one work dir do: the file set and object names are oc-mirror v2's each time, with no
// empty mirror set and nothing left of an earlier run (nor of bootstrap's older names).
func TestOutputsAsOCMirror(t *testing.T) {
	dir := t.TempDir()
	for _, legacy := range []string{"idms.yaml", "itms.yaml", "catalogsource-cs-old-v1.yaml", "cs-old-index-v1.yaml"} {
		if err := os.WriteFile(filepath.Join(dir, legacy), []byte("kind: CatalogSource\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range ocMirrorCases() {
		outs, err := WriteOutputs(dir, c.content)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		want := append(append([]string(nil), c.files...), "content.json", "mapping.txt")
		sort.Strings(want)
		if got := dirFiles(t, dir); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: files %v, want oc-mirror's %v", c.name, got, want)
		}
		reported := strings.Fields(strings.Join(append([]string{outs.IDMS, outs.ITMS}, outs.CatalogSources...), " "))
		sort.Strings(reported)
		if !reflect.DeepEqual(reported, c.files) {
			t.Errorf("%s: Outputs name %v, want %v", c.name, reported, c.files)
		}
		for file, names := range c.objects {
			if got := objectNames(t, filepath.Join(dir, file)); !reflect.DeepEqual(got, names) {
				t.Errorf("%s: %s holds %v, want oc-mirror's %v", c.name, file, got, names)
			}
		}
	}
}

// TestMirrorSetEntries pins which set each source lands in: the release image by tag in both (the
// installer reads its mirror from the digest set), components and operators by digest only, an
// additional image by tag only in the tag set; catalogs in neither.
func TestMirrorSetEntries(t *testing.T) {
	c := ocMirrorCases()[0]
	idms, itms := mirrorSets(c.content.Images)
	got := func(sets [3]map[string]string) map[string][]string {
		out := map[string][]string{}
		for cat, m := range sets {
			for _, k := range sortedKeys(m) {
				out[category(cat).String()] = append(out[category(cat).String()], k)
			}
		}
		return out
	}
	wantIDMS := map[string][]string{
		"release":  {"quay.io/openshift-release-dev/ocp-release", "quay.io/openshift-release-dev/ocp-v4.0-art-dev"},
		"operator": {"registry.redhat.io/rhel9/op-bundle", "registry.redhat.io/rhel9/operator"},
		"generic":  {"quay.io/acme/tool"},
	}
	wantITMS := map[string][]string{"release": {"quay.io/openshift-release-dev/ocp-release"}, "generic": {"registry.redhat.io/ubi9/ubi"}}
	if g := got(idms); !reflect.DeepEqual(g, wantIDMS) {
		t.Errorf("digest sets %v, want %v", g, wantIDMS)
	}
	if g := got(itms); !reflect.DeepEqual(g, wantITMS) {
		t.Errorf("tag sets %v, want %v", g, wantITMS)
	}
}

func dirFiles(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// objectNames lists metadata.name of every YAML document in a file, in order.
func objectNames(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	dec := yaml.NewDecoder(bytes.NewReader(b))
	for {
		var doc struct {
			Metadata struct {
				Name string `yaml:"name"`
			} `yaml:"metadata"`
		}
		if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
			return out
		} else if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, doc.Metadata.Name)
	}
}
