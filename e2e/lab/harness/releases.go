package harness

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"fmt"
	"sort"
	"strings"

	"github.com/bootstrap-dev/bootstrap/internal/mirror/mirrortest"
)

// The lab's upgrade releases: synthetic payloads beyond the installed ReleaseVersion, so that
// `bootstrap upgrade plan` finds a multi-hop path and the mirror delta is real. Each payload's
// release-manifests/release-metadata lists its `previous` versions, as real payloads do; the
// lab's update service (updates.go) draws the graph's edges from the same lists, as Cincinnati
// draws them from the payloads.
//
//	4.18.0 ─┬─ 4.19.1 (blocked: LabRegression, the edge is removed) ── 4.20.0 ── 4.21.0
//	        └─ 4.19.2 ── 4.20.1 (conditional: LabBareMetalRisk, PromQL) ── 4.21.1
//	              4.19.1 ─ 4.19.2,  4.20.0 ─ 4.20.1,  4.21.0 ─ 4.21.1
//
// From the installed 4.18.0 the only path to UpgradeTarget is 4.18.0 → 4.19.2 → 4.20.1 → 4.21.1,
// and CarriedBefore (the older z-streams) are what a site would have mirrored a month earlier:
// none of them is on the path, so a delta from that carry holds the three hops and nothing else.
var UpgradeReleases = []UpgradeRelease{
	{Version: "4.19.1", Previous: []string{"4.18.0"}},
	{Version: "4.19.2", Previous: []string{"4.18.0", "4.19.1"}},
	{Version: "4.20.0", Previous: []string{"4.19.1"}},
	{Version: "4.20.1", Previous: []string{"4.19.2", "4.20.0"}},
	{Version: "4.21.0", Previous: []string{"4.20.0"}},
	{Version: "4.21.1", Previous: []string{"4.20.1", "4.21.0"}},
}

// UpgradeRelease is one synthetic release and the versions its release-metadata names as
// valid update sources.
type UpgradeRelease struct {
	Version  string
	Previous []string
}

const (
	// UpgradeTarget is the newest lab release: three minor hops from ReleaseVersion.
	UpgradeTarget = "4.21.1"
	// UpgradeComponents is how many component images each upgrade payload lists.
	UpgradeComponents = 4
	// BlockedRisk names the graph-data blocked edge without rules (4.18 → 4.19.1 removed).
	BlockedRisk = "LabRegression"
	// ConditionalRisk names the blocked edge with a PromQL rule (4.19.2 → 4.20.1 conditional):
	// no captured state decides it, so a plan through it needs a named person's acceptance.
	ConditionalRisk = "LabBareMetalRisk"
)

// CarriedBefore are the releases a site mirrored before the plan: the installed one and an older
// z-stream of each later minor, none on the path to UpgradeTarget.
var CarriedBefore = []string{ReleaseVersion, "4.19.1", "4.20.0", "4.21.0"}

// ReleaseImage is a lab release's public name (the tag the source registry holds it under).
func ReleaseImage(version string) string {
	return "quay.io/openshift-release-dev/ocp-release:" + version + "-x86_64"
}

// AllReleases are ReleaseVersion and the upgrade releases, oldest first.
func AllReleases() []string {
	out := []string{ReleaseVersion}
	for _, r := range UpgradeReleases {
		out = append(out, r.Version)
	}
	return out
}

// Edges are the update edges release-metadata declares (from, to), blocked ones included.
func Edges() [][2]string {
	var out [][2]string
	for _, r := range UpgradeReleases {
		for _, p := range r.Previous {
			out = append(out, [2]string{p, r.Version})
		}
	}
	return out
}

// Channels maps each stable channel the lab's update service serves to its versions, oldest
// first: stable-4.N holds the 4.N releases and the 4.(N-1) releases that update into them.
func Channels() map[string][]string {
	set := map[string]map[string]bool{"stable-4.18": {ReleaseVersion: true}}
	for _, e := range Edges() {
		ch := "stable-" + minorOf(e[1])
		if set[ch] == nil {
			set[ch] = map[string]bool{}
		}
		set[ch][e[0]], set[ch][e[1]] = true, true
	}
	out := map[string][]string{}
	for ch, vs := range set {
		for v := range vs {
			out[ch] = append(out[ch], v)
		}
		sort.Slice(out[ch], func(i, j int) bool { return lessVersion(out[ch][i], out[ch][j]) })
	}
	return out
}

func minorOf(v string) string {
	parts := strings.SplitN(v, ".", 3)
	return parts[0] + "." + parts[1]
}

func lessVersion(a, b string) bool {
	var x, y [3]int
	_, _ = fmt.Sscanf(a, "%d.%d.%d", &x[0], &x[1], &x[2])
	_, _ = fmt.Sscanf(b, "%d.%d.%d", &y[0], &y[1], &y[2])
	for i := range x {
		if x[i] != y[i] {
			return x[i] < y[i]
		}
	}
	return false
}

// upgradeCatalogPackages are the catalogs of the later minors: the GPU Operator gains 25.10
// (NVIDIA declares 4.14-4.21 for it; 25.3 stops at 4.19), the Network Operator 25.7.
func upgradeCatalogPackages() (redhat, certified []mirrortest.PackageSpec) {
	certified = []mirrortest.PackageSpec{
		{Name: "gpu-operator-certified", DefaultChannel: "v25.10", Channels: map[string][]string{
			"v25.3": {"25.3.0", "25.3.1"}, "v25.10": {"25.10.0"}, "stable": {"24.9.2", "25.3.1", "25.10.0"}}},
		{Name: "nvidia-network-operator", DefaultChannel: "stable", Channels: map[string][]string{
			"stable": {"25.1.0", "25.4.0", "25.7.0"}, "v25.4": {"25.4.0"}}},
	}
	return redhatPackages, certified
}

// SeedReleases pushes the upgrade releases (UpgradeComponents components each, release-metadata
// with their previous lists), a cosign signature tag sha256-<hex>.sig for each signed with the
// lab's throwaway cosign key (CosignKey), the catalogs v4.19 .. v4.21, ubi9/ubi:latest (the
// base oc-mirror builds the graph-data image on) and the GPU driver images (nvcr.io/nvidia/driver)
// the NVIDIA matrix names for 4.19+ (-rhel9.6) with the GPU Operator 25.3 and 25.10 drivers. Deterministic: pushing again changes no digest.
func SeedReleases(ctx context.Context, b *mirrortest.Builder, host string) error {
	key := CosignKey()
	for _, r := range UpgradeReleases {
		rel, err := b.Release(ctx, mirrortest.ReleaseSpec{PushHost: host, NameHost: "quay.io", Version: r.Version,
			Components: UpgradeComponents, LayerKiB: layerKiB, Previous: r.Previous})
		if err != nil {
			return fmt.Errorf("release %s: %w", r.Version, err)
		}
		if _, err := b.SignWith(ctx, host+"/openshift-release-dev/ocp-release", "quay.io/openshift-release-dev/ocp-release", rel.Digest,
			func(p []byte) ([]byte, error) { return ed25519.Sign(key, p), nil }); err != nil {
			return fmt.Errorf("release %s: cosign signature: %w", r.Version, err)
		}
	}
	redhat, certified := upgradeCatalogPackages()
	for _, minor := range []string{"4.19", "4.20", "4.21"} {
		for _, c := range []mirrortest.CatalogSpec{
			{PushHost: host, NameHost: "registry.redhat.io", Repo: "redhat/redhat-operator-index", Tag: "v" + minor, Packages: redhat, LayerKiB: layerKiB},
			{PushHost: host, NameHost: "registry.redhat.io", Repo: "redhat/certified-operator-index", Tag: "v" + minor, Packages: certified, LayerKiB: layerKiB},
		} {
			if _, err := b.Catalog(ctx, c); err != nil {
				return fmt.Errorf("catalog %s:%s: %w", c.Repo, c.Tag, err)
			}
		}
	}
	for _, im := range [][2]string{{"ubi9/ubi", "latest"}, {"nvidia/driver", "570.148.08-rhel9.6"}, {"nvidia/driver", "580.95.05-rhel9.6"}} {
		spec := mirrortest.ImageSpec{Layers: []mirrortest.Blob{b.Layer(layerKiB * 1024)}}
		if _, err := b.Image(ctx, host+"/"+im[0], im[1], spec); err != nil {
			return fmt.Errorf("%s:%s: %w", im[0], im[1], err)
		}
	}
	return nil
}

// CosignKey is the lab's throwaway cosign key (ed25519), derived from a fixed seed so that a
// seeded source registry, copied between labs, keeps verifying. It signs nothing outside the lab.
func CosignKey() ed25519.PrivateKey {
	seed := sha256.Sum256([]byte("bootstrap lab throwaway cosign key"))
	return ed25519.NewKeyFromSeed(seed[:])
}
