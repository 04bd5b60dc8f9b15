package mirror

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/regclient/regclient/types/ref"
	"go.yaml.in/yaml/v3"
)

// ContentAPIVersion identifies content.json documents.
const ContentAPIVersion = "bootstrap.openshift.io/mirror-content/v1"

// Content is content.json: every mirrored image with its digest, size, source and destination,
// the evidence the report builds on and the input of Verify.
type Content struct {
	APIVersion string        `json:"apiVersion"`
	Images     []ImageResult `json:"images"`
	Catalogs   []CatalogOut  `json:"catalogs,omitempty"`
	// Graph are the carried update graph files (graph.go), beside content.json.
	Graph []GraphEntry `json:"graph,omitempty"`
}

// CatalogOut is a mirrored catalog, as its CatalogSource names it.
type CatalogOut struct {
	Name   string `json:"name"`   // CatalogSource name
	Source string `json:"source"` // catalog as configured
	Image  string `json:"image"`  // destination by digest
	// Advertised are the bundle and related images the (filtered) catalog names; Verify checks
	// each resolves at the destination through the mirror sets.
	Advertised []string `json:"advertised,omitempty"`
}

// Outputs are the files WriteOutputs wrote, by purpose, as paths relative to the work dir.
type Outputs struct {
	IDMS           string   `json:"idms"`
	ITMS           string   `json:"itms,omitempty"`
	CatalogSources []string `json:"catalogSources,omitempty"`
	Content        string   `json:"content"`
	Mapping        string   `json:"mapping"`
}

// WriteOutputs writes idms.yaml, itms.yaml (when some image is mirrored by tag only),
// catalogsource-<name>.yaml per catalog, content.json and mapping.txt into dir. Output is
// deterministic: the same content gives byte-identical files.
func WriteOutputs(dir string, c Content) (Outputs, error) {
	c.APIVersion = ContentAPIVersion
	c.Images = append([]ImageResult(nil), c.Images...)
	// An image found already present is not read again (one HEAD), so its size and whether the
	// registry refused its sparse index come from the content.json of the run that copied it.
	prev := map[string]ImageResult{}
	if old, err := ReadContent(filepath.Join(dir, "content.json")); err == nil {
		for _, im := range old.Images {
			prev[im.Source+"@"+im.Digest] = im
		}
	}
	for i := range c.Images {
		im := &c.Images[i]
		if im.Size == 0 {
			p := prev[im.Source+"@"+im.Digest]
			im.Size, im.SparseRefused, im.ExtraPlatforms, im.ExtraBytes = p.Size, p.SparseRefused, p.ExtraPlatforms, p.ExtraBytes
		}
		im.Skipped = false // a property of one run, not of the content
	}
	sort.Slice(c.Images, func(i, j int) bool { return c.Images[i].Source < c.Images[j].Source })
	idms, itms := map[string]string{}, map[string]string{}
	var mapping strings.Builder
	for _, im := range c.Images {
		if im.Error != "" {
			continue
		}
		fmt.Fprintf(&mapping, "%s=%s\n", im.Source, im.Dest)
		sr, err1 := ref.New(im.Source)
		dr, err2 := ref.New(im.Dest)
		if err1 != nil || err2 != nil || im.Kind == KindCatalog || im.Kind == KindGraph {
			continue
		}
		src, dst := sr.Registry+"/"+sr.Repository, dr.Registry+"/"+dr.Repository
		if sr.Digest != "" || im.Kind == KindRelease || im.Kind == KindReleaseComponent || im.Kind == KindSignature {
			idms[src] = dst
		} else {
			itms[src] = dst
		}
	}
	out := Outputs{IDMS: "idms.yaml", Content: "content.json", Mapping: "mapping.txt"}
	if err := writeYAML(filepath.Join(dir, out.IDMS), mirrorSet("ImageDigestMirrorSet", "imageDigestMirrors", idms)); err != nil {
		return out, err
	}
	itmsPath := filepath.Join(dir, "itms.yaml")
	if len(itms) > 0 {
		out.ITMS = "itms.yaml"
		if err := writeYAML(itmsPath, mirrorSet("ImageTagMirrorSet", "imageTagMirrors", itms)); err != nil {
			return out, err
		}
	} else if err := os.Remove(itmsPath); err != nil && !os.IsNotExist(err) {
		return out, err
	}
	for _, cat := range c.Catalogs {
		name := "catalogsource-" + cat.Name + ".yaml"
		if err := writeYAML(filepath.Join(dir, name), catalogSource(cat)); err != nil {
			return out, err
		}
		out.CatalogSources = append(out.CatalogSources, name)
	}
	if err := WriteContent(filepath.Join(dir, out.Content), c); err != nil {
		return out, err
	}
	return out, writeFile(filepath.Join(dir, out.Mapping), []byte(mapping.String()))
}

// WriteContent writes a content.json (atomically). A disk mirror's directory carries one: the
// disconnected half reads the image names and digests from it.
func WriteContent(path string, c Content) error {
	c.APIVersion = ContentAPIVersion
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	return writeFile(path, append(b, '\n'))
}

// ArchiveHost is the registry name a disk mirror records its destinations under: the
// disconnected half replaces it with its own registry and namespace.
const ArchiveHost = "archive"

// ArchiveImages turns the content.json of a disk mirror into images to push from it into
// host/namespace, each pinned to its recorded digest. A destination recorded under ArchiveHost
// keeps its path (a catalog's targetCatalog and targetTag) under host/namespace.
func ArchiveImages(c Content, host, namespace string) ([]Image, error) {
	var out []Image
	for _, im := range c.Images {
		if im.Error != "" || im.Digest == "" {
			continue
		}
		d, err := DestFor(im.Source, host, namespace)
		if err != nil {
			return nil, err
		}
		if rest, ok := strings.CutPrefix(im.Dest, ArchiveHost+"/"); ok {
			d = host + "/" + rest
			if ns := strings.Trim(namespace, "/"); ns != "" {
				d = host + "/" + ns + "/" + rest
			}
		}
		out = append(out, Image{Source: im.Source, Dest: d, Kind: im.Kind, Origin: im.Origin, Pinned: im.Digest})
	}
	return out, nil
}

// CarriedCatalogs are the catalogs a disk mirror carried (filtered on the connected side, or whole),
// pointed at the digest they were pushed with from it: what their CatalogSources name.
func CarriedCatalogs(c Content, copied []ImageResult) []CatalogOut {
	var out []CatalogOut
	for _, cat := range c.Catalogs {
		for _, im := range copied {
			if im.Source == cat.Source && im.Kind == KindCatalog && im.Digest != "" {
				cat.Image = repoOnly(im.Dest) + "@" + im.Digest
				out = append(out, cat)
				break
			}
		}
	}
	return out
}

func mirrorSet(kind, field string, m map[string]string) map[string]any {
	entries := []map[string]any{}
	for _, src := range sortedKeys(m) {
		entries = append(entries, map[string]any{"source": src, "mirrors": []string{m[src]}})
	}
	name := "bootstrap-mirror"
	return map[string]any{
		"apiVersion": "config.openshift.io/v1",
		"kind":       kind,
		"metadata":   map[string]any{"name": name},
		"spec":       map[string]any{field: entries},
	}
}

func catalogSource(c CatalogOut) map[string]any {
	return map[string]any{
		"apiVersion": "operators.coreos.com/v1alpha1",
		"kind":       "CatalogSource",
		"metadata":   map[string]any{"name": c.Name, "namespace": "openshift-marketplace"},
		"spec": map[string]any{
			"sourceType":  "grpc",
			"image":       c.Image,
			"displayName": c.Name,
			"publisher":   "bootstrap mirror",
		},
	}
}

func writeYAML(path string, v any) error {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return err
	}
	if err := enc.Close(); err != nil {
		return err
	}
	return writeFile(path, buf.Bytes())
}

// writeFile replaces path atomically (temp file + rename) so a crash never leaves half a file.
func writeFile(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// ReadContent reads a content.json written by WriteOutputs.
func ReadContent(path string) (Content, error) {
	var c Content
	b, err := os.ReadFile(path)
	if err != nil {
		return c, err
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return c, fmt.Errorf("%s: %w", path, err)
	}
	if c.APIVersion != ContentAPIVersion {
		return c, fmt.Errorf("%s: apiVersion %q, want %q", path, c.APIVersion, ContentAPIVersion)
	}
	return c, nil
}
