package harness

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/regclient/regclient"
	"github.com/regclient/regclient/config"

	"github.com/bootstrap-dev/bootstrap/internal/mirror/mirrortest"
)

// Lab content: what the source registry holds and the ImageSetConfiguration selects.
const (
	// ReleaseVersion is the synthetic release (the profile's cluster.release.version).
	ReleaseVersion = "4.18.0"
	// ReleaseComponents is how many component images the payload's image-references lists.
	ReleaseComponents = 20
	// contentSeed makes the content deterministic: the same digests on every machine and start.
	contentSeed = 4180
	// layerKiB scales every layer: the lab mirrors a few MiB in seconds.
	layerKiB = 32
)

// redhatPackages and certifiedPackages are the lab catalogs: several channels, a deprecated
// bundle, channel heads below and above the default channel's.
var (
	redhatPackages = []mirrortest.PackageSpec{
		{Name: "openshift-gitops-operator", DefaultChannel: "latest", Channels: map[string][]string{
			"latest": {"1.15.0", "1.15.1", "1.16.0"}, "gitops-1.15": {"1.15.0", "1.15.1"}, "gitops-1.16": {"1.16.0"}},
			Deprecated: []string{"1.15.0"}},
		{Name: "sriov-network-operator", DefaultChannel: "stable", Channels: map[string][]string{
			"stable": {"4.18.0-202501010000", "4.18.0-202502010000"}}},
		{Name: "nfd", DefaultChannel: "stable", Channels: map[string][]string{
			"stable": {"4.18.0-202501150000", "4.18.0-202502150000"}, "alpha": {"4.19.0-202503010000"}}},
	}
	certifiedPackages = []mirrortest.PackageSpec{
		{Name: "gpu-operator-certified", DefaultChannel: "v25.3", Channels: map[string][]string{
			"v24.9": {"24.9.0", "24.9.2"}, "v25.3": {"25.3.0", "25.3.1"}, "stable": {"24.9.2", "25.3.1"}}},
		{Name: "nvidia-network-operator", DefaultChannel: "stable", Channels: map[string][]string{
			"stable": {"25.1.0", "25.4.0"}, "v25.4": {"25.4.0"}}},
	}
	// extraImages are additionalImages: repository and tag.
	extraImages = [][2]string{{"ubi9/ubi", "9.5"}, {"rhel9/support-tools", "latest"}, {"nvidia/cuda-sample", "vectoradd-cuda12"}}
)

// SeedContent is the lab's Seeder: it pushes, through the mirror engineer's test-content builder,
// a release payload of ReleaseComponents components named as quay.io/openshift-release-dev plus
// an installer component carrying the openshift-install TEST DOUBLE (built here from this
// checkout) at usr/bin/openshift-install, so the iso stage extracts it from the mirror, two
// file-based catalogs named as registry.redhat.io (openshift-gitops-operator,
// sriov-network-operator, nfd; gpu-operator-certified, nvidia-network-operator) and three additional images, and returns
// the ImageSetConfiguration that selects them.
func SeedContent(ctx context.Context, host, caFile string) ([]byte, error) {
	ca, err := os.ReadFile(caFile)
	if err != nil {
		return nil, err
	}
	rc := regclient.New(
		regclient.WithConfigHost(config.Host{Name: host, TLS: config.TLSEnabled, RegCert: string(ca)}),
		regclient.WithSlog(slog.New(slog.NewTextHandler(io.Discard, nil))),
	)
	double, err := buildDouble(ctx)
	if err != nil {
		return nil, err
	}
	b := mirrortest.NewBuilder(rc, contentSeed)
	if _, err := b.Release(ctx, mirrortest.ReleaseSpec{PushHost: host, NameHost: "quay.io", Version: ReleaseVersion,
		Components: ReleaseComponents, LayerKiB: layerKiB, Installer: double}); err != nil {
		return nil, fmt.Errorf("release: %w", err)
	}
	for _, c := range []mirrortest.CatalogSpec{
		{PushHost: host, NameHost: "registry.redhat.io", Repo: "redhat/redhat-operator-index", Tag: "v4.18", Packages: redhatPackages, LayerKiB: layerKiB},
		{PushHost: host, NameHost: "registry.redhat.io", Repo: "redhat/certified-operator-index", Tag: "v4.18", Packages: certifiedPackages, LayerKiB: layerKiB},
	} {
		if _, err := b.Catalog(ctx, c); err != nil {
			return nil, fmt.Errorf("catalog %s: %w", c.Repo, err)
		}
	}
	for _, im := range extraImages {
		spec := mirrortest.ImageSpec{Layers: []mirrortest.Blob{b.Layer(2 * layerKiB * 1024), b.Layer(layerKiB * 1024)}}
		if _, err := b.Image(ctx, host+"/"+im[0], im[1], spec); err != nil {
			return nil, fmt.Errorf("image %s: %w", im[0], err)
		}
	}
	// Last, so the day-1 content keeps the digests it had before the upgrade releases existed.
	if err := SeedReleases(ctx, b, host); err != nil {
		return nil, err
	}
	return []byte(labISC()), nil
}

// labISC selects: the release; gitops from two channels, sriov and nfd by default channel; the
// GPU operator's v25.3 channel from 25.3.1 only, the Network Operator by default channel; the
// additional images.
func labISC() string {
	var extra strings.Builder
	for _, im := range extraImages {
		fmt.Fprintf(&extra, "    - name: registry.redhat.io/%s:%s\n", im[0], im[1])
	}
	return `# oc-mirror v2 ImageSetConfiguration of the lab, written by the lab's source registry seeder.
# The names are the public ones; the profile's mirror.source.registry reads them from the lab.
kind: ImageSetConfiguration
apiVersion: mirror.openshift.io/v2alpha1
mirror:
  platform:
    architectures: [amd64]
    channels:
      - name: stable-4.18
        minVersion: ` + ReleaseVersion + `
        maxVersion: ` + ReleaseVersion + `
  operators:
    - catalog: registry.redhat.io/redhat/redhat-operator-index:v4.18
      packages:
        - name: openshift-gitops-operator
          channels:
            - name: latest
            - name: gitops-1.16
        - name: sriov-network-operator
        - name: nfd
    - catalog: registry.redhat.io/redhat/certified-operator-index:v4.18
      packages:
        - name: gpu-operator-certified
          channels:
            - name: v25.3
              minVersion: 25.3.1
        - name: nvidia-network-operator
  additionalImages:
` + extra.String()
}
