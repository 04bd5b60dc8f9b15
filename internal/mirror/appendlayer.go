package mirror

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/opencontainers/go-digest"
	"github.com/regclient/regclient"
	"github.com/regclient/regclient/types/descriptor"
	"github.com/regclient/regclient/types/manifest"
	"github.com/regclient/regclient/types/mediatype"
	v1 "github.com/regclient/regclient/types/oci/v1"
	"github.com/regclient/regclient/types/ref"
)

// appendLayer writes a base image with one more layer as a new image, the one way the filtered
// catalog and the graph-data image are built: the base's layers copied from src, the new layer (a
// gzip'd tar whose uncompressed digest is diffID), the base config cfg with the layer's diff ID
// and a history entry (createdBy) added, then the manifest, pushed to dst, or by digest into the
// OCI layout o.Dest.Dir for a disk mirror. Every call is retried as every registry call is. It
// returns the manifest's digest and the image's size.
func appendLayer(ctx context.Context, rc *regclient.RegClient, src, dst ref.Ref, layers []descriptor.Descriptor,
	layer []byte, diffID digest.Digest, cfg map[string]any, createdBy string, o Options) (string, int64, error) {
	rootfs, _ := cfg["rootfs"].(map[string]any)
	if rootfs == nil {
		rootfs = map[string]any{"type": "layers"}
		cfg["rootfs"] = rootfs
	}
	ids, _ := rootfs["diff_ids"].([]any)
	rootfs["diff_ids"] = append(ids, diffID.String())
	hist, _ := cfg["history"].([]any)
	cfg["history"] = append(hist, map[string]any{"created_by": createdBy})
	newCfg, err := json.Marshal(cfg)
	if err != nil {
		return "", 0, err
	}
	push := dst // a disk mirror's layout holds it by digest; content.json keeps its name
	if o.Dest.Dir != "" {
		if push, err = ref.New("ocidir://" + o.Dest.Dir); err != nil {
			return "", 0, err
		}
	}
	for _, l := range layers {
		if err := o.retry(ctx, []string{src.Registry, push.Registry}, func(ctx context.Context) error { return rc.BlobCopy(ctx, src, push, l) }); err != nil {
			return "", 0, fmt.Errorf("layer %s: %w", l.Digest, err)
		}
	}
	layerDesc := descriptor.Descriptor{MediaType: mediatype.OCI1LayerGzip, Digest: digest.FromBytes(layer), Size: int64(len(layer))}
	cfgDesc := descriptor.Descriptor{MediaType: mediatype.OCI1ImageConfig, Digest: digest.FromBytes(newCfg), Size: int64(len(newCfg))}
	for _, b := range []struct {
		d    descriptor.Descriptor
		data []byte
	}{{layerDesc, layer}, {cfgDesc, newCfg}} {
		if err := o.retry(ctx, []string{push.Registry}, func(ctx context.Context) error {
			_, err := rc.BlobPut(ctx, push, b.d, bytes.NewReader(b.data))
			return err
		}); err != nil {
			return "", 0, err
		}
	}
	nm, err := manifest.New(manifest.WithOrig(v1.Manifest{Versioned: v1.ManifestSchemaVersion, MediaType: mediatype.OCI1Manifest,
		Config: cfgDesc, Layers: append(append([]descriptor.Descriptor{}, layers...), layerDesc)}))
	if err != nil {
		return "", 0, err
	}
	if o.Dest.Dir != "" {
		push = push.SetDigest(nm.GetDescriptor().Digest.String())
	}
	if err := o.retry(ctx, []string{push.Registry}, func(ctx context.Context) error { return rc.ManifestPut(ctx, push, nm) }); err != nil {
		return "", 0, err
	}
	size := cfgDesc.Size + layerDesc.Size
	for _, l := range layers {
		size += l.Size
	}
	return nm.GetDescriptor().Digest.String(), size, nil
}
