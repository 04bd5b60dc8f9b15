package mirror

import (
	"encoding/base64"
	"fmt"
	"strings"
)

// Real-shaped bundles for BenchmarkCatalogMemory. The figures come from the 727 bundles of the 35
// packages of redhat-openshift-ecosystem/community-operators-prod catalogs/v4.18 (read with the
// search tool's fetch, 2026-12-06; each document measured as compact JSON, as opm serves it):
//
//	bundle document    mean 15.1 KB, median 10.2 KB, p90 31.3 KB, max 172 KB
//	olm.csv.metadata   1 per bundle, 13.1 KB mean (87 % of the bytes: description, alm-examples)
//	olm.gvk            8.0 per bundle, 100 B each
//	olm.gvk.required   0.06 per bundle; olm.package.required 0.01 per bundle
//	relatedImages      5.4 per bundle (median 2, max 95)
//
// The figure for redhat-operator-index-shaped catalogs is about 11 KB a bundle, with
// olm.bundle.object properties (base64 CRDs and CSV) in older bundles. The generator below makes
// bundles of about 11 KB: olm.package, 8 olm.gvk, one olm.csv.metadata of about 8 KB, one
// olm.bundle.object of about 1.3 KB on every bundle, an olm.gvk.required on every 16th and an
// olm.package.required on every 64th, and 5 related images (the bundle among them). Nothing of
// the real catalogs is copied: text and names are generated.

// shapedBundle returns one real-shaped olm.bundle document for bundle i of package pkg (version
// v, global index g, used to make digests unique). refs, when set, are the bundle image and its
// four related images (images that exist, for a run that copies them); otherwise they are made up.
func shapedBundle(pkg, v string, i, g int, refs []string) map[string]any {
	img := fmt.Sprintf("registry.example.com/ops/%s-bundle@sha256:%064x", pkg, g)
	if refs != nil {
		img = refs[0]
	}
	props := []any{map[string]any{"type": "olm.package", "value": map[string]any{"packageName": pkg, "version": v}}}
	for k := 0; k < 8; k++ {
		props = append(props, map[string]any{"type": "olm.gvk", "value": map[string]any{
			"group": pkg + ".example.com", "kind": fmt.Sprintf("Resource%dKind", k), "version": "v1beta1"}})
	}
	if i%16 == 0 {
		props = append(props, map[string]any{"type": "olm.gvk.required", "value": map[string]any{"group": "cert-manager.io", "kind": "Certificate", "version": "v1"}})
	}
	if i%64 == 0 {
		props = append(props, map[string]any{"type": "olm.package.required", "value": map[string]any{"packageName": "cert-manager", "versionRange": ">=1.10.0"}})
	}
	props = append(props,
		map[string]any{"type": "olm.csv.metadata", "value": map[string]any{
			"annotations": map[string]string{
				"alm-examples":   shapedText(pkg, v, 3000),
				"capabilities":   "Full Lifecycle",
				"categories":     "Monitoring, Storage",
				"containerImage": strings.Replace(img, "-bundle", "", 1),
				"createdAt":      "2025-03-11T10:12:00Z",
				"repository":     "https://github.com/example/" + pkg,
				"support":        "Example",
			},
			"apiServiceDefinitions": map[string]any{},
			"crdDescriptions":       map[string]any{"owned": []any{map[string]any{"kind": "Resource0Kind", "name": "resource0kinds." + pkg + ".example.com", "version": "v1beta1", "displayName": "Resource", "description": shapedText(pkg, v, 300)}}},
			"description":           shapedText(pkg, v, 4200),
			"displayName":           pkg,
			"installModes":          []any{map[string]any{"type": "OwnNamespace", "supported": true}, map[string]any{"type": "AllNamespaces", "supported": true}},
			"keywords":              []string{"operator", "example", pkg},
			"links":                 []any{map[string]any{"name": "Documentation", "url": "https://example.com/" + pkg}},
			"maintainers":           []any{map[string]any{"name": "Example", "email": "ops@example.com"}},
			"maturity":              "stable",
			"minKubeVersion":        "1.25.0",
			"provider":              map[string]any{"name": "Example"},
		}},
		map[string]any{"type": "olm.bundle.object", "value": map[string]any{
			"data": base64.StdEncoding.EncodeToString([]byte(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"resource0kinds.` +
				pkg + `.example.com"},"spec":{"description":"` + shapedText(pkg, v, 800) + `"}}`))}})
	rel := []any{map[string]any{"name": "", "image": img}}
	for k := 1; k < 5; k++ {
		ri := fmt.Sprintf("registry.example.com/ops/%s-component-%d@sha256:%064x", pkg, k, g*8+k)
		if refs != nil {
			ri = refs[k]
		}
		rel = append(rel, map[string]any{"name": fmt.Sprintf("component-%d", k), "image": ri})
	}
	return map[string]any{"schema": "olm.bundle", "package": pkg, "name": pkg + ".v" + v, "image": img,
		"properties": props, "relatedImages": rel}
}

// shapedWords are mixed into generated text so that it compresses about as prose does.
var shapedWords = strings.Fields("the operator manages deploys configures upgrades monitors backs restores scales " +
	"its operand cluster storage network certificate controller reconcile namespace resource custom definition " +
	"install channel subscription version release support documentation example service route secret volume")

// shapedText is n bytes of generated prose, different for each package and version.
func shapedText(pkg, v string, n int) string {
	var b strings.Builder
	h := uint32(2166136261)
	for _, c := range pkg + v {
		h = (h ^ uint32(c)) * 16777619
	}
	for b.Len() < n {
		h = h*1103515245 + 12345
		b.WriteString(shapedWords[(h>>16)%uint32(len(shapedWords))])
		b.WriteByte(' ')
	}
	return b.String()[:n]
}
