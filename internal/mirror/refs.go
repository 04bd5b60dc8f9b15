package mirror

import (
	"context"
	"fmt"
	"sort"

	"github.com/regclient/regclient"
	"github.com/regclient/regclient/types/manifest"
	"github.com/regclient/regclient/types/ref"
)

// Where an image is read and written, and the retried manifest reads every path shares.

// sortedKeys returns a map's keys in order, for deterministic output.
func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// sourceRef is where an image is read: the registry (with the override applied) or, for the
// disconnected half of a disk mirror, the OCI layout by digest.
func sourceRef(im Image, o Options) (ref.Ref, error) {
	if o.SourceDir != "" {
		if im.Pinned == "" {
			return ref.Ref{}, fmt.Errorf("image %s: no digest recorded for it in the archive", im.Source)
		}
		return ref.New("ocidir://" + o.SourceDir + "@" + im.Pinned)
	}
	return readRef(im.Source, o.SourceRegistry)
}

// destRef is where an image goes: its destination reference, or the OCI layout (by digest only:
// tags of different repositories would collide in one layout; content.json keeps the names).
func destRef(dest string, o Options) (ref.Ref, error) {
	if o.Dest.Dir != "" {
		return ref.New("ocidir://" + o.Dest.Dir)
	}
	r, err := ref.New(dest)
	if err != nil {
		return r, fmt.Errorf("destination %q: %w", dest, err)
	}
	return r, nil
}

// manifestHead and manifestGet retry one request on temporary errors (the registry client itself
// does not retry: see retry.go), so one unlucky request does not fail a whole image's resolution.
func manifestHead(ctx context.Context, rc *regclient.RegClient, o Options, r ref.Ref, opts ...regclient.ManifestOpts) (manifest.Manifest, error) {
	var m manifest.Manifest
	err := o.retry(ctx, []string{r.Registry}, func(ctx context.Context) error {
		var err error
		m, err = rc.ManifestHead(ctx, r, opts...)
		return err
	})
	return m, err
}

func manifestGet(ctx context.Context, rc *regclient.RegClient, o Options, r ref.Ref) (manifest.Manifest, error) {
	var m manifest.Manifest
	err := o.retry(ctx, []string{r.Registry}, func(ctx context.Context) error {
		var err error
		m, err = rc.ManifestGet(ctx, r)
		return err
	})
	return m, err
}
