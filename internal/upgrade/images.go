package upgrade

import (
	"sort"
	"strings"

	"github.com/blang/semver/v4"

	"github.com/bootstrap-dev/bootstrap/internal/mirror"
)

// SignatureNamespace is where the CVO looks for release signatures in the cluster (library-go
// pkg/verify/store/configmap): ConfigMaps labelled mirror.SignatureLabel, each signature under a
// binaryData key starting with the digest, sha256-<hex>-N, as the mirror writes them (all releases
// in one ConfigMap, mirror.SignatureConfigMapName, as oc-mirror v2 does).
const SignatureNamespace = "openshift-config-managed"

// cosignFrom is the first minor whose CRI-O verifies the release's cosign signature on pull:
// its sha256-<hex>.sig tag must be carried beside the release.
var cosignFrom = semver.MustParse("4.21.0")

// images lists what the plan needs carried, sorted by reference and deduplicated: each hop's
// release by digest (its components come from its release-metadata when mirrored), its
// signature ConfigMap, its cosign signature tag from 4.21, the driver images and the operator
// bundles of the steps.
func images(p *Plan) []Image {
	seen := map[string]bool{}
	var out []Image
	add := func(im Image) {
		if !seen[im.Kind+" "+im.Ref] {
			seen[im.Kind+" "+im.Ref] = true
			out = append(out, im)
		}
	}
	for _, h := range p.Hops {
		hop := h.From + " -> " + h.To
		add(Image{Ref: h.Payload, Kind: "release", For: hop})
		d := digestOf(h.Payload)
		hex := strings.TrimPrefix(d, "sha256:")
		add(Image{Ref: "ConfigMap " + SignatureNamespace + "/" + mirror.SignatureConfigMapName + " (binaryData sha256-" + hex + "-N, label " + mirror.SignatureLabel + ")", Kind: "signature", For: hop})
		if v, err := semver.Parse(h.To); err == nil && v.GTE(cosignFrom) {
			repo, _, _ := strings.Cut(h.Payload, "@")
			add(Image{Ref: repo + ":sha256-" + hex + ".sig", Kind: "cosign-signature", For: hop})
		}
		for _, s := range append(append([]Step(nil), h.Before...), h.After...) {
			if s.Image == "" {
				continue
			}
			kind := "bundle"
			if strings.HasPrefix(s.Action, "carry the driver image") {
				kind = "driver"
			}
			add(Image{Ref: s.Image, Kind: kind, For: hop})
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Kind != out[j].Kind {
			return kindOrder(out[i].Kind) < kindOrder(out[j].Kind)
		}
		return false // hop order within a kind
	})
	return out
}

func kindOrder(k string) int {
	for i, x := range []string{"release", "signature", "cosign-signature", "driver", "bundle"} {
		if x == k {
			return i
		}
	}
	return 99
}
