package mirror

import (
	"fmt"
	"strings"

	"github.com/regclient/regclient/types/ref"
)

// Kind says why an image is mirrored.
type Kind string

// Image kinds.
const (
	KindRelease          Kind = "release"
	KindReleaseComponent Kind = "release-component"
	KindCatalog          Kind = "catalog"
	KindBundle           Kind = "operator-bundle"
	KindRelated          Kind = "operator-related"
	KindAdditional       Kind = "additional"
	KindSignature        Kind = "signature"
	// KindReferrer is an OCI referrer of a mirrored image (a signature, an SBOM, an attestation),
	// found through the referrers API or its sha256-<hex> fallback tag.
	KindReferrer Kind = "referrer"
)

// Image is one source image and where it goes.
type Image struct {
	// Source is the reference as clusters name it (host/repo:tag or host/repo@sha256:...).
	Source string `json:"source"`
	// Dest is the destination reference: the same repository path under the destination
	// registry and namespace, with the same tag or digest.
	Dest string `json:"dest"`
	Kind Kind   `json:"kind"`
	// Origin names the release or catalog the image was found in, if any.
	Origin string `json:"origin,omitempty"`
	// Pinned is the digest to read when the source is an OCI layout (Options.SourceDir).
	Pinned string `json:"-"`
}

// DestFor maps a source reference to its destination under host/namespace, keeping the repository
// path, tag and digest (oc-mirror v2's docker://HOST/NS layout).
func DestFor(source, host, namespace string) (string, error) {
	r, err := ref.New(source)
	if err != nil {
		return "", fmt.Errorf("image %q: %w", source, err)
	}
	repo := r.Repository
	if ns := strings.Trim(namespace, "/"); ns != "" {
		repo = ns + "/" + repo
	}
	out := host + "/" + repo
	if r.Tag != "" && r.Digest == "" {
		out += ":" + r.Tag
	}
	if r.Digest != "" {
		out += "@" + r.Digest
	}
	return out, nil
}

// Images builds Image values for sources of one kind, mapped under host/namespace.
func Images(sources []string, kind Kind, origin, host, namespace string) ([]Image, error) {
	out := make([]Image, 0, len(sources))
	for _, s := range sources {
		d, err := DestFor(s, host, namespace)
		if err != nil {
			return nil, err
		}
		out = append(out, Image{Source: s, Dest: d, Kind: kind, Origin: origin})
	}
	return out, nil
}

// dedupImages drops repeated (source, dest) pairs, keeping the first (and its kind).
func dedupImages(in []Image) []Image {
	seen := map[string]bool{}
	out := make([]Image, 0, len(in))
	for _, im := range in {
		k := im.Source + " " + im.Dest
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, im)
	}
	return out
}

// readRef parses a source reference for reading, applying the source registry override.
func readRef(source, override string) (ref.Ref, error) {
	r, err := ref.New(source)
	if err != nil {
		return r, fmt.Errorf("image %q: %w", source, err)
	}
	if override != "" {
		r.Registry = override
		r.Reference = r.CommonName()
	}
	return r, nil
}
