package mirrortest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"

	"github.com/opencontainers/go-digest"
	"github.com/regclient/regclient"
	"github.com/regclient/regclient/types/descriptor"
	"github.com/regclient/regclient/types/manifest"
	"github.com/regclient/regclient/types/mediatype"
	v1 "github.com/regclient/regclient/types/oci/v1"
	"github.com/regclient/regclient/types/platform"
	"github.com/regclient/regclient/types/ref"
)

// Blob is content ready to push, with its descriptor.
type Blob struct {
	Desc descriptor.Descriptor
	Data []byte
}

func newBlob(mt string, data []byte) Blob {
	return Blob{Desc: descriptor.Descriptor{MediaType: mt, Digest: digest.FromBytes(data), Size: int64(len(data))}, Data: data}
}

// Builder pushes deterministic synthetic content: the same seed gives the same digests.
type Builder struct {
	RC  *regclient.RegClient
	mu  sync.Mutex
	rng *rand.Rand
}

// NewBuilder returns a builder pushing through rc.
func NewBuilder(rc *regclient.RegClient, seed uint64) *Builder {
	return &Builder{RC: rc, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))} //#nosec G404 -- test content
}

// Layer returns a gzip'd tar holding one file of size pseudo-random bytes.
func (b *Builder) Layer(size int) Blob {
	data := make([]byte, size)
	b.mu.Lock()
	for i := range data {
		data[i] = byte(b.rng.Uint32())
	}
	n := b.rng.Uint64()
	b.mu.Unlock()
	l, err := FilesLayer(map[string][]byte{fmt.Sprintf("data/%016x", n): data})
	if err != nil {
		panic(err) // writing to memory cannot fail
	}
	return l
}

// FilesLayer returns a gzip'd tar of the files (paths without a leading slash), in name order.
func FilesLayer(files map[string][]byte) (Blob, error) {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if err := tw.WriteHeader(&tar.Header{Name: n, Mode: 0o644, Size: int64(len(files[n])), Typeflag: tar.TypeReg}); err != nil {
			return Blob{}, err
		}
		if _, err := tw.Write(files[n]); err != nil {
			return Blob{}, err
		}
	}
	if err := tw.Close(); err != nil {
		return Blob{}, err
	}
	if err := gz.Close(); err != nil {
		return Blob{}, err
	}
	return newBlob(mediatype.OCI1LayerGzip, buf.Bytes()), nil
}

// ImageSpec describes one single-platform image.
type ImageSpec struct {
	Layers []Blob
	Labels map[string]string
	// Platform is "linux/amd64" when empty.
	Platform string
	// Entrypoint and Cmd go into the image config.
	Entrypoint, Cmd []string
}

// Image pushes the spec's blobs and manifest to repo (host/path) under tag, or by digest only when
// tag is empty, and returns the manifest descriptor.
func (b *Builder) Image(ctx context.Context, repo, tag string, spec ImageSpec) (descriptor.Descriptor, error) {
	r, err := ref.New(repo)
	if err != nil {
		return descriptor.Descriptor{}, err
	}
	pl := spec.Platform
	if pl == "" {
		pl = "linux/amd64"
	}
	p, err := platform.Parse(pl)
	if err != nil {
		return descriptor.Descriptor{}, err
	}
	diffs := make([]string, 0, len(spec.Layers))
	for _, l := range spec.Layers {
		diffs = append(diffs, l.Desc.Digest.String()) // not the real diff IDs; nothing here unpacks them
	}
	cfg := map[string]any{"architecture": p.Architecture, "os": p.OS,
		"config": map[string]any{"Labels": spec.Labels, "Entrypoint": spec.Entrypoint, "Cmd": spec.Cmd}, "rootfs": map[string]any{"type": "layers", "diff_ids": diffs}}
	cb, err := json.Marshal(cfg)
	if err != nil {
		return descriptor.Descriptor{}, err
	}
	config := newBlob(mediatype.OCI1ImageConfig, cb)
	for _, bl := range append([]Blob{config}, spec.Layers...) {
		if _, err := b.RC.BlobPut(ctx, r, bl.Desc, bytes.NewReader(bl.Data)); err != nil {
			return descriptor.Descriptor{}, fmt.Errorf("push blob to %s: %w", repo, err)
		}
	}
	layers := make([]descriptor.Descriptor, 0, len(spec.Layers))
	for _, l := range spec.Layers {
		layers = append(layers, l.Desc)
	}
	m, err := manifest.New(manifest.WithOrig(v1.Manifest{Versioned: v1.ManifestSchemaVersion,
		MediaType: mediatype.OCI1Manifest, Config: config.Desc, Layers: layers}))
	if err != nil {
		return descriptor.Descriptor{}, err
	}
	return b.put(ctx, r, tag, m, &p)
}

// Index pushes one image per platform (by digest) and an OCI index over them to repo under tag
// (by digest only when tag is empty).
func (b *Builder) Index(ctx context.Context, repo, tag string, specs []ImageSpec) (descriptor.Descriptor, error) {
	r, err := ref.New(repo)
	if err != nil {
		return descriptor.Descriptor{}, err
	}
	var ds []descriptor.Descriptor
	for _, s := range specs {
		d, err := b.Image(ctx, repo, "", s)
		if err != nil {
			return d, err
		}
		ds = append(ds, d)
	}
	m, err := manifest.New(manifest.WithOrig(v1.Index{Versioned: v1.IndexSchemaVersion,
		MediaType: mediatype.OCI1ManifestList, Manifests: ds}))
	if err != nil {
		return descriptor.Descriptor{}, err
	}
	return b.put(ctx, r, tag, m, nil)
}

func (b *Builder) put(ctx context.Context, r ref.Ref, tag string, m manifest.Manifest, p *platform.Platform) (descriptor.Descriptor, error) {
	d := m.GetDescriptor()
	target := r.SetDigest(d.Digest.String())
	if tag != "" {
		target = r.SetTag(tag)
	}
	if err := b.RC.ManifestPut(ctx, target, m); err != nil {
		return d, fmt.Errorf("push manifest to %s: %w", target.CommonName(), err)
	}
	d.Platform = p
	return d, nil
}

// Sign pushes a cosign-style signature for the image digest in repo: a small manifest tagged
// sha256-<hex>.sig in the same repository, as cosign stores them.
func (b *Builder) Sign(ctx context.Context, repo string, dig string) (descriptor.Descriptor, error) {
	payload := []byte(`{"critical":{"identity":{"docker-reference":"` + repo + `"},"image":{"docker-manifest-digest":"` + dig + `"},"type":"cosign container image signature"},"optional":null}`)
	l := newBlob("application/vnd.dev.cosign.simplesigning.v1+json", payload)
	return b.Image(ctx, repo, strings.Replace(dig, ":", "-", 1)+".sig", ImageSpec{Layers: []Blob{l}})
}

// CosignSignatureAnnotation is the layer annotation cosign stores a signature in (base64).
const CosignSignatureAnnotation = "dev.cosignproject.cosign/signature"

// SignWith pushes a cosign signature for the image digest in repo, tagged sha256-<hex>.sig: the
// simple-signing payload naming identity (the image's public name) and dig, signed by sign, the
// signature in the layer's CosignSignatureAnnotation as cosign writes it.
func (b *Builder) SignWith(ctx context.Context, repo, identity, dig string, sign func(payload []byte) ([]byte, error)) (descriptor.Descriptor, error) {
	payload, err := json.Marshal(map[string]any{"critical": map[string]any{"identity": map[string]string{"docker-reference": identity},
		"image": map[string]string{"docker-manifest-digest": dig}, "type": "cosign container image signature"}, "optional": nil})
	if err != nil {
		return descriptor.Descriptor{}, err
	}
	sig, err := sign(payload)
	if err != nil {
		return descriptor.Descriptor{}, err
	}
	l := newBlob("application/vnd.dev.cosign.simplesigning.v1+json", payload)
	l.Desc.Annotations = map[string]string{CosignSignatureAnnotation: base64.StdEncoding.EncodeToString(sig)}
	return b.Image(ctx, repo, strings.Replace(dig, ":", "-", 1)+".sig", ImageSpec{Layers: []Blob{l}})
}

// Attach pushes an OCI artifact (an SBOM, a signature) whose subject is the manifest dig in repo,
// by digest only; the registry's referrers API or the sha256-<hex> fallback tag (regclient
// maintains it when the registry has no API) lists it.
func (b *Builder) Attach(ctx context.Context, repo, dig, artifactType string, payload []byte) (descriptor.Descriptor, error) {
	r, err := ref.New(repo)
	if err != nil {
		return descriptor.Descriptor{}, err
	}
	subj, err := b.RC.ManifestHead(ctx, r.SetDigest(dig), regclient.WithManifestRequireDigest())
	if err != nil {
		return descriptor.Descriptor{}, err
	}
	empty := newBlob("application/vnd.oci.empty.v1+json", []byte("{}"))
	layer := newBlob("application/octet-stream", payload)
	for _, bl := range []Blob{empty, layer} {
		if _, err := b.RC.BlobPut(ctx, r, bl.Desc, bytes.NewReader(bl.Data)); err != nil {
			return descriptor.Descriptor{}, err
		}
	}
	sd := subj.GetDescriptor()
	m, err := manifest.New(manifest.WithOrig(v1.Manifest{Versioned: v1.ManifestSchemaVersion, MediaType: mediatype.OCI1Manifest,
		ArtifactType: artifactType, Config: empty.Desc, Layers: []descriptor.Descriptor{layer.Desc},
		Subject: &descriptor.Descriptor{MediaType: sd.MediaType, Digest: sd.Digest, Size: sd.Size}}))
	if err != nil {
		return descriptor.Descriptor{}, err
	}
	return b.put(ctx, r, "", m, nil)
}
