package mirror

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/regclient/regclient/types/ref"
)

// The result files and object names below are oc-mirror v2's, so that a site's GitOps repository
// that applies oc-mirror's working-dir/cluster-resources by name applies bootstrap's unchanged.
// The reference is openshift/oc-mirror internal/pkg/clusterresources/clusterresources.go and
// const.go (v2/internal/pkg/clusterresources before the v2 tree moved to the root): the
// IDMS_ITMSGenerator, generateIDMS/generateITMS, generateCatalogSource and
// GenerateSignatureConfigMap functions. bootstrap's own files (content.json, mapping.txt) are
// written beside them.
const (
	// IDMSFile holds one ImageDigestMirrorSet per category (idms-release-0, idms-operator-0,
	// idms-generic-0), each only when it has entries; the file is absent when none has.
	IDMSFile = "idms-oc-mirror.yaml"
	// ITMSFile holds the ImageTagMirrorSets (itms-release-0, ...), the same way.
	ITMSFile = "itms-oc-mirror.yaml"
	// SignatureConfigMapFile and SignatureConfigMapJSON hold the one ConfigMap
	// SignatureConfigMapName with every release signature mirrored (YAML and JSON, as oc-mirror).
	SignatureConfigMapFile = "signature-configmap.yaml"
	SignatureConfigMapJSON = "signature-configmap.json"
	// SignatureConfigMapName is the name oc-mirror gives the signature ConfigMap.
	SignatureConfigMapName = "mirrored-release-signatures"
	// CatalogSourcePattern matches the CatalogSource files: the CatalogSource's name (always
	// "cs-...") and ".yaml".
	CatalogSourcePattern = "cs-*.yaml"
)

// legacyOutputs are the names bootstrap wrote before it wrote oc-mirror's: removed when outputs
// are written, so that configure never applies a stale set beside the new one.
var legacyOutputs = []string{"idms.yaml", "itms.yaml", "catalogsource-*.yaml", "signature-configmap-*.yaml"}

// CatalogSourceFile is the file a CatalogSource named name is written to (oc-mirror's
// generateCatalogSource: the name, then ".yaml").
func CatalogSourceFile(name string) string { return name + ".yaml" }

// category is oc-mirror's mirrorCategory: the mirror sets are split by it, in this order.
type category int

const (
	catRelease category = iota
	catOperator
	catGeneric
)

func (c category) String() string {
	return [...]string{"release", "operator", "generic"}[c]
}

// categoryOf is oc-mirror's imageTypeToCategory for bootstrap's kinds.
func categoryOf(k Kind) category {
	switch k {
	case KindRelease, KindReleaseComponent:
		return catRelease
	case KindBundle, KindRelated, KindCatalog:
		return catOperator
	}
	return catGeneric
}

// mirrorSets sorts the mirrored images into digest and tag mirror sets by category, as
// oc-mirror's generateImageMirrors does: a source by digest (with or without a tag) and the
// release image (by tag too, so the installer finds its mirror) go into the digest sets; a source
// with a tag goes into the tag sets. Catalogs are left out (their CatalogSource names them).
// Signatures and referrers live in the repository of the image they belong to, and join its
// category. Entries are repository-scoped (oc-mirror widens a source to its namespace when the
// destination path ends with the source path; a repository entry is the narrower, equally valid
// form), sorted by source.
func mirrorSets(images []ImageResult) (idms, itms [3]map[string]string) {
	for i := range idms {
		idms[i], itms[i] = map[string]string{}, map[string]string{}
	}
	kindOf := map[string]Kind{}
	for _, im := range images {
		kindOf[im.Source] = im.Kind
	}
	for _, im := range images {
		if im.Error != "" || im.Kind == KindCatalog || im.Kind == KindGraph {
			continue
		}
		sr, err1 := ref.New(im.Source)
		dr, err2 := ref.New(im.Dest)
		if err1 != nil || err2 != nil {
			continue
		}
		src, dst := sr.Registry+"/"+sr.Repository, dr.Registry+"/"+dr.Repository
		k := im.Kind
		if k == KindSignature || k == KindReferrer {
			k = kindOf[im.Origin]
			idms[categoryOf(k)][src] = dst
			continue
		}
		c := categoryOf(k)
		if sr.Digest != "" || k == KindRelease {
			idms[c][src] = dst
		}
		if sr.Digest == "" || sr.Tag != "" {
			itms[c][src] = dst
		}
	}
	return idms, itms
}

// mirrorSetDocs renders the non-empty categories as prefix-<category>-0 objects, in category order.
func mirrorSetDocs(kind, field, prefix string, sets [3]map[string]string) []any {
	var docs []any
	for c, m := range sets {
		if len(m) == 0 {
			continue
		}
		entries := []map[string]any{}
		for _, src := range sortedKeys(m) {
			entries = append(entries, map[string]any{"source": src, "mirrors": []string{m[src]}})
		}
		docs = append(docs, map[string]any{
			"apiVersion": "config.openshift.io/v1",
			"kind":       kind,
			"metadata":   map[string]any{"name": prefix + "-" + category(c).String() + "-0"},
			"spec":       map[string]any{field: entries},
		})
	}
	return docs
}

// writeDocsOrRemove writes docs as a multi-document YAML file, or removes the file when there are
// none: oc-mirror writes no empty mirror set, and a stale one must not be applied.
func writeDocsOrRemove(path string, docs []any) (bool, error) {
	if len(docs) == 0 {
		if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
			return false, err
		}
		return false, nil
	}
	return true, writeYAMLDocs(path, docs...)
}

// removeStale removes the legacy output names and the CatalogSource files of earlier runs that
// this run did not write (the catalogs they named are still in the registry under their tags).
func removeStale(dir string, keep map[string]bool) error {
	for _, p := range append(legacyOutputs, CatalogSourcePattern) {
		names, err := filepath.Glob(filepath.Join(dir, p))
		if err != nil {
			return err
		}
		for _, n := range names {
			if keep[filepath.Base(n)] {
				continue
			}
			if err := os.Remove(n); err != nil && !os.IsNotExist(err) {
				return err
			}
		}
	}
	return nil
}

// ReleaseSignatures are one release digest's signatures.
type ReleaseSignatures struct {
	Digest     string
	Signatures [][]byte
}

// WriteSignatureConfigMap writes every release's signatures into the one ConfigMap oc-mirror
// writes (SignatureConfigMapName in openshift-config-managed, labelled SignatureLabel) as
// SignatureConfigMapFile and SignatureConfigMapJSON in dir, and returns the two file names. Keys
// are sha256-<hex>-N, N counting each digest's signatures from 1: the cluster version operator
// reads every key that starts with the digest (library-go pkg/verify/store/configmap).
func WriteSignatureConfigMap(dir string, releases []ReleaseSignatures) ([]string, error) {
	data := map[string]string{}
	for _, r := range releases {
		name := strings.Replace(r.Digest, ":", "-", 1)
		for i, s := range r.Signatures {
			data[fmt.Sprintf("%s-%d", name, i+1)] = encodeBase64(s)
		}
	}
	cm := map[string]any{
		"apiVersion": "v1",
		"kind":       "ConfigMap",
		"metadata": map[string]any{
			"name":      SignatureConfigMapName,
			"namespace": "openshift-config-managed",
			"labels":    map[string]string{SignatureLabel: ""},
		},
		"binaryData": data,
	}
	if err := writeYAMLDocs(filepath.Join(dir, SignatureConfigMapFile), cm); err != nil {
		return nil, err
	}
	b, err := json.Marshal(cm) // map keys sorted: deterministic
	if err != nil {
		return nil, err
	}
	if err := writeFile(filepath.Join(dir, SignatureConfigMapJSON), b); err != nil {
		return nil, err
	}
	return []string{SignatureConfigMapFile, SignatureConfigMapJSON}, nil
}
