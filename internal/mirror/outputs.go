package mirror

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/bootstrap-dev/bootstrap/internal/fsroot"
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

// Outputs are the files WriteOutputs wrote, by purpose, as paths relative to the work dir. The
// mirror sets and CatalogSources carry oc-mirror v2's file and object names (clusterresources.go);
// content.json and mapping.txt are bootstrap's own.
type Outputs struct {
	IDMS           string   `json:"idms,omitempty"`
	ITMS           string   `json:"itms,omitempty"`
	CatalogSources []string `json:"catalogSources,omitempty"`
	Content        string   `json:"content"`
	Mapping        string   `json:"mapping"`
}

// WriteOutputs writes IDMSFile and ITMSFile (each only when some image needs it),
// cs-<name>.yaml per catalog, content.json and mapping.txt into dir, and removes what an earlier
// run wrote that this one did not (older file names, CatalogSources of catalogs no longer
// mirrored). Output is deterministic: the same content gives byte-identical files.
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
	var mapping strings.Builder
	for _, im := range c.Images {
		if im.Error == "" {
			fmt.Fprintf(&mapping, "%s=%s\n", im.Source, im.Dest)
		}
	}
	idms, itms := mirrorSets(c.Images)
	out := Outputs{Content: "content.json", Mapping: "mapping.txt"}
	keep := map[string]bool{}
	for _, cat := range c.Catalogs {
		keep[CatalogSourceFile(cat.Name)] = true
	}
	if err := removeStale(dir, keep); err != nil {
		return out, err
	}
	wrote, err := writeDocsOrRemove(filepath.Join(dir, IDMSFile), mirrorSetDocs("ImageDigestMirrorSet", "imageDigestMirrors", "idms", idms))
	if err != nil {
		return out, err
	}
	if wrote {
		out.IDMS = IDMSFile
	}
	if wrote, err = writeDocsOrRemove(filepath.Join(dir, ITMSFile), mirrorSetDocs("ImageTagMirrorSet", "imageTagMirrors", "itms", itms)); err != nil {
		return out, err
	}
	if wrote {
		out.ITMS = ITMSFile
	}
	for _, cat := range c.Catalogs {
		name := CatalogSourceFile(cat.Name)
		if err := writeYAMLDocs(filepath.Join(dir, name), catalogSource(cat)); err != nil {
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

// writeYAMLDocs writes one YAML document per value, each after "---" when there are several
// (oc-mirror's multi-document mirror set files).
func writeYAMLDocs(path string, docs ...any) error {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	for _, v := range docs {
		if err := enc.Encode(v); err != nil {
			return err
		}
	}
	if err := enc.Close(); err != nil {
		return err
	}
	return writeFile(path, buf.Bytes())
}

func encodeBase64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

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
	b, err := fsroot.ReadBeneath(path, fsroot.Content)
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
