package mirrortest

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/regclient/regclient/types/descriptor"
)

// ReleaseSpec describes a synthetic release payload.
type ReleaseSpec struct {
	// PushHost is where content is pushed; NameHost is the host written into image-references
	// (quay.io in a lab whose mirror reads through a source-registry override). NameHost defaults
	// to PushHost.
	PushHost, NameHost string
	Version            string // "4.16.3"
	Components         int    // number of component images (~20 like a small payload)
	LayerKiB           int
	// Multi pushes the release image as an amd64+arm64 index instead of one amd64 image.
	Multi bool
	// Installer, when set, is the openshift-install binary of an "installer" component image
	// (at usr/bin/openshift-install in its last layer, over the payload's base layers), as
	// real payloads carry it; image-references then lists it after the other components.
	Installer []byte
	// InstallerTag names the installer component ("installer" when empty; older payloads carry
	// openshift-install in "baremetal-installer").
	InstallerTag string
	// Previous, when set, are the versions release-metadata lists as valid update sources (its
	// "previous", from which the update service draws the graph's edges), with an errata URL in
	// its "metadata". Nil keeps the bare {kind, version} document.
	Previous []string
}

// Release is what Release pushed.
type Release struct {
	Image      string            // NameHost/openshift-release-dev/ocp-release:VERSION-x86_64
	Digest     string            // of the release image
	Components map[string]string // name -> NameHost/openshift-release-dev/ocp-v4.0-art-dev@sha256:...
}

// Release pushes component images (by digest, one repository, sharing an OCP base stack) and a
// release image whose last layer holds release-manifests/image-references.
func (b *Builder) Release(ctx context.Context, s ReleaseSpec) (*Release, error) {
	if s.NameHost == "" {
		s.NameHost = s.PushHost
	}
	k := s.LayerKiB * 1024
	base := []Blob{b.Layer(3 * k), b.Layer(k)}
	out := &Release{Components: map[string]string{}}
	type tag struct {
		Name string            `json:"name"`
		From map[string]string `json:"from"`
	}
	var tags []tag
	for i := range s.Components {
		name := fmt.Sprintf("component-%02d", i)
		d, err := b.Image(ctx, s.PushHost+"/openshift-release-dev/ocp-v4.0-art-dev", "",
			ImageSpec{Layers: append(base[:2:2], b.Layer(k/2+i*64)), Labels: map[string]string{"io.openshift.build.component": name}})
		if err != nil {
			return nil, err
		}
		img := s.NameHost + "/openshift-release-dev/ocp-v4.0-art-dev@" + d.Digest.String()
		out.Components[name] = img
		tags = append(tags, tag{Name: name, From: map[string]string{"kind": "DockerImage", "name": img}})
	}
	if s.Installer != nil {
		itag := s.InstallerTag
		if itag == "" {
			itag = "installer"
		}
		bin, err := TarLayer(Gzip, Entry{Name: "usr/", Type: '5'}, Entry{Name: "usr/bin/", Type: '5'},
			Entry{Name: "usr/bin/openshift-install", Mode: 0o755, Data: s.Installer})
		if err != nil {
			return nil, err
		}
		d, err := b.Image(ctx, s.PushHost+"/openshift-release-dev/ocp-v4.0-art-dev", "",
			ImageSpec{Layers: append(base[:2:2], bin), Labels: map[string]string{"io.openshift.build.component": itag}})
		if err != nil {
			return nil, err
		}
		img := s.NameHost + "/openshift-release-dev/ocp-v4.0-art-dev@" + d.Digest.String()
		out.Components[itag] = img
		tags = append(tags, tag{Name: itag, From: map[string]string{"kind": "DockerImage", "name": img}})
	}
	is, err := json.Marshal(map[string]any{"kind": "ImageStream", "apiVersion": "image.openshift.io/v1",
		"metadata": map[string]any{"name": s.Version}, "spec": map[string]any{"tags": tags}})
	if err != nil {
		return nil, err
	}
	meta := []byte(`{"kind":"cincinnati-metadata-v0","version":"` + s.Version + `"}`)
	if s.Previous != nil {
		if meta, err = ReleaseMetadata(s.Version, s.Previous); err != nil {
			return nil, err
		}
	}
	payload, err := FilesLayer(map[string][]byte{
		"release-manifests/image-references": is,
		"release-manifests/release-metadata": meta,
	})
	if err != nil {
		return nil, err
	}
	spec := ImageSpec{Layers: append(base[:2:2], payload), Labels: map[string]string{"io.openshift.release": s.Version}}
	repo, tagName := s.PushHost+"/openshift-release-dev/ocp-release", s.Version+"-x86_64"
	var d descriptor.Descriptor
	if s.Multi {
		arm := spec
		arm.Platform = "linux/arm64"
		d, err = b.Index(ctx, repo, tagName, []ImageSpec{spec, arm})
	} else {
		d, err = b.Image(ctx, repo, tagName, spec)
	}
	if err != nil {
		return nil, err
	}
	out.Image = s.NameHost + "/openshift-release-dev/ocp-release:" + tagName
	out.Digest = d.Digest.String()
	return out, nil
}

// ReleaseMetadata renders a payload's release-manifests/release-metadata as release payloads
// carry it (kind cincinnati-metadata-v0, version, previous, metadata.url).
func ReleaseMetadata(version string, previous []string) ([]byte, error) {
	return json.Marshal(map[string]any{"kind": "cincinnati-metadata-v0", "version": version, "previous": previous,
		"metadata": map[string]any{"description": "", "url": "https://errata.example.com/" + version}})
}

// PackageSpec describes one operator package: channels list bundle versions oldest first, each
// replacing the one before; the last is the channel head.
type PackageSpec struct {
	Name           string
	DefaultChannel string
	Channels       map[string][]string
	// Deprecated bundle versions get an olm.deprecations entry.
	Deprecated []string
}

// CatalogSpec describes a file-based catalog image.
type CatalogSpec struct {
	PushHost, NameHost string
	Repo, Tag          string // "redhat/redhat-operator-index", "v4.16"
	Packages           []PackageSpec
	LayerKiB           int
}

// Catalog is what Catalog pushed.
type Catalog struct {
	Image  string
	Digest string
	// Bundles maps "package.vVERSION" to its bundle image; Related maps it to its related images.
	Bundles map[string]string
	Related map[string][]string
}

// Catalog pushes, per package version, an operator image and a bundle image (both by digest), then
// a catalog image with the ConfigsLabel label, an opm-like base, the configs layer and a cache layer.
func (b *Builder) Catalog(ctx context.Context, s CatalogSpec) (*Catalog, error) {
	if s.NameHost == "" {
		s.NameHost = s.PushHost
	}
	k := s.LayerKiB * 1024
	base := b.Layer(2 * k)
	out := &Catalog{Bundles: map[string]string{}, Related: map[string][]string{}}
	files := map[string][]byte{}
	for _, p := range s.Packages {
		var docs []any
		docs = append(docs, map[string]any{"schema": "olm.package", "name": p.Name, "defaultChannel": p.DefaultChannel})
		versions := map[string]bool{}
		for _, ch := range sortedChannels(p.Channels) {
			var entries []map[string]any
			prev := ""
			for _, v := range p.Channels[ch] {
				versions[v] = true
				e := map[string]any{"name": p.Name + ".v" + v}
				if prev != "" {
					e["replaces"] = p.Name + ".v" + prev
				}
				entries = append(entries, e)
				prev = v
			}
			docs = append(docs, map[string]any{"schema": "olm.channel", "package": p.Name, "name": ch, "entries": entries})
		}
		for _, v := range sortedChannels(versions) {
			bn := p.Name + ".v" + v
			op, err := b.Image(ctx, s.PushHost+"/operators/"+p.Name, "", ImageSpec{Layers: []Blob{base, b.Layer(k)}})
			if err != nil {
				return nil, err
			}
			bun, err := b.Image(ctx, s.PushHost+"/operators/"+p.Name+"-bundle", "", ImageSpec{Layers: []Blob{b.Layer(k / 4)}})
			if err != nil {
				return nil, err
			}
			opImg := s.NameHost + "/operators/" + p.Name + "@" + op.Digest.String()
			bunImg := s.NameHost + "/operators/" + p.Name + "-bundle@" + bun.Digest.String()
			out.Bundles[bn], out.Related[bn] = bunImg, []string{opImg}
			docs = append(docs, map[string]any{"schema": "olm.bundle", "name": bn, "package": p.Name, "image": bunImg,
				"properties":    []any{map[string]any{"type": "olm.package", "value": map[string]any{"packageName": p.Name, "version": v}}},
				"relatedImages": []any{map[string]any{"name": "operator", "image": opImg}, map[string]any{"name": "", "image": bunImg}}})
		}
		if len(p.Deprecated) > 0 {
			var entries []any
			for _, v := range p.Deprecated {
				entries = append(entries, map[string]any{"reference": map[string]any{"schema": "olm.bundle", "name": p.Name + ".v" + v}, "message": "deprecated"})
			}
			docs = append(docs, map[string]any{"schema": "olm.deprecations", "package": p.Name, "entries": entries})
		}
		var buf []byte
		for _, d := range docs {
			j, err := json.Marshal(d)
			if err != nil {
				return nil, err
			}
			buf = append(append(buf, j...), '\n')
		}
		files["configs/"+p.Name+"/catalog.json"] = buf
	}
	configs, err := FilesLayer(files)
	if err != nil {
		return nil, err
	}
	cache, err := FilesLayer(map[string][]byte{"tmp/cache/digest": []byte("stale-cache")})
	if err != nil {
		return nil, err
	}
	d, err := b.Image(ctx, s.PushHost+"/"+s.Repo, s.Tag, ImageSpec{Layers: []Blob{base, configs, cache},
		Labels:     map[string]string{"operators.operatorframework.io.index.configs.v1": "/configs"},
		Entrypoint: []string{"/bin/opm"}, Cmd: []string{"serve", "/configs", "--cache-dir=/tmp/cache"}})
	if err != nil {
		return nil, err
	}
	out.Image, out.Digest = s.NameHost+"/"+s.Repo+":"+s.Tag, d.Digest.String()
	return out, nil
}

func sortedChannels[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	for i := range out { // tiny maps: insertion sort keeps this file free of extra imports
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}
