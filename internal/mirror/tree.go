package mirror

import (
	"context"
	"fmt"

	"github.com/regclient/regclient"
	"github.com/regclient/regclient/types/descriptor"
	"github.com/regclient/regclient/types/manifest"
	"github.com/regclient/regclient/types/platform"
)

// An image's manifest tree as read from its source, with the platform filter applied.

// readTree reads the root manifest and its children from the source. Children of other platforms
// than o.Platforms are read too (manifests only, never a layer) but kept apart in p.skipped: the
// index is pushed with its original bytes (its digest is what pull specs and IDMS name), so the
// destination gets a sparse index, and a registry that refuses one needs them after all.
func readTree(ctx context.Context, rc *regclient.RegClient, p *planned, o Options) error {
	root, err := manifestGet(ctx, rc, o, p.src)
	if err != nil {
		return fmt.Errorf("source %s: %w", p.Source, err)
	}
	p.mediaType = root.GetDescriptor().MediaType
	p.manifests, p.blobs, p.size = nil, nil, 0
	p.skipped, p.skippedBlobs, p.skippedSize, p.skippedPlatforms, p.skippedDigests, p.skippedErr, p.full = nil, nil, 0, 0, nil, nil, false
	seen := map[string]bool{}
	add := func(skip bool, ds ...descriptor.Descriptor) {
		for _, d := range ds {
			if seen[string(d.Digest)] {
				continue
			}
			seen[string(d.Digest)] = true
			if skip {
				p.skippedBlobs = append(p.skippedBlobs, d)
				p.skippedSize += d.Size
			} else {
				p.blobs = append(p.blobs, d)
				p.size += d.Size
			}
		}
	}
	var walk func(m manifest.Manifest, depth int, skip bool) error
	walk = func(m manifest.Manifest, depth int, skip bool) error {
		if depth > 3 {
			return fmt.Errorf("source %s: index nesting deeper than 3", p.Source)
		}
		if ix, ok := m.(manifest.Indexer); ok {
			list, err := ix.GetManifestList()
			if err != nil {
				return err
			}
			for _, d := range list {
				cskip := skip || !wantPlatform(d.Platform, o.Platforms)
				if cskip && !skip {
					p.skippedPlatforms++
				}
				if cskip {
					p.skippedDigests = append(p.skippedDigests, d.Digest.String())
				}
				cm, err := manifestGet(ctx, rc, o, p.src.SetDigest(d.Digest.String()))
				if err != nil {
					if cskip {
						// an archive holds only the kept children; a registry that accepts the
						// sparse index does not need them: only a refusal makes this an error
						p.skippedErr = fmt.Errorf("source %s child %s (%s): %w", p.Source, d.Digest, platformString(d.Platform), err)
						continue
					}
					return fmt.Errorf("source %s child %s: %w", p.Source, d.Digest, err)
				}
				if err := walk(cm, depth+1, cskip); err != nil {
					return err
				}
			}
		} else if im, ok := m.(manifest.Imager); ok {
			cfg, err := im.GetConfig()
			if err != nil {
				return err
			}
			layers, err := im.GetLayers()
			if err != nil {
				return err
			}
			add(skip, cfg)
			add(skip, layers...)
		}
		raw, _ := m.RawBody()
		if skip {
			p.skippedSize += int64(len(raw))
			p.skipped = append(p.skipped, m)
		} else {
			p.size += int64(len(raw))
			p.manifests = append(p.manifests, m)
		}
		return nil
	}
	return walk(root, 0, false)
}

func platformString(p *platform.Platform) string {
	if p == nil {
		return "no platform"
	}
	return p.String()
}

// wantPlatform keeps a child when no filter is set, when it names no platform (attestations and
// the like travel with the image) or when it matches one of the wanted platforms.
func wantPlatform(p *platform.Platform, want []string) bool {
	if AllPlatforms(want) || p == nil {
		return true
	}
	for _, w := range want {
		wp, err := platform.Parse(w)
		if err == nil && platform.Match(wp, *p) {
			return true
		}
	}
	return false
}
