package mirror

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/opencontainers/go-digest"
	"github.com/regclient/regclient"
	"github.com/regclient/regclient/types/ref"
)

// Catalogs finishes the catalogs of a resolution after Copy: a catalog mirrored whole (full with
// no packages) is referenced by the digest Copy gave it; every other catalog is rebuilt holding only
// its selection and pushed under the catalog's destination tag, never alongside the unfiltered one.
// It returns the CatalogSource data and the content.json entries of the rebuilt images.
func Catalogs(ctx context.Context, res *Resolved, copied []ImageResult, o Options) ([]CatalogOut, []ImageResult, error) {
	var outs []CatalogOut
	var ims []ImageResult
	var rc *regclient.RegClient
	o = o.withRun()
	for _, cat := range res.Catalogs {
		co := CatalogOut{Name: cat.Name, Source: cat.Source, Advertised: cat.Advertised}
		if !cat.filtered {
			for _, im := range copied {
				if im.Source == cat.Source && im.Kind == KindCatalog && im.Digest != "" {
					co.Image = repoOnly(im.Dest) + "@" + im.Digest
				}
			}
			outs = append(outs, co)
			continue
		}
		if rc == nil {
			var err error
			if rc, err = newClient(o, hostsOf([]Image{{Source: cat.Source}})...); err != nil {
				return nil, nil, err
			}
		}
		ir, err := pushFilteredCatalog(ctx, rc, cat, o)
		if err != nil {
			return outs, ims, fmt.Errorf("filtered catalog %s: %w", cat.Source, err)
		}
		co.Image = repoOnly(ir.Dest) + "@" + ir.Digest
		outs = append(outs, co)
		ims = append(ims, ir)
	}
	return outs, ims, nil
}

// pushFilteredCatalog builds the filtered catalog: the source image's layers, plus one layer that
// replaces the configs directory (an opaque whiteout, then the filtered documents) and empties the
// opm cache directory. The cache is removed rather than rebuilt: a cache computed from the
// unfiltered catalog no longer matches, and opm serve with --cache-dir enforces cache integrity by
// default, which is how filtered catalogs end in CrashLoopBackOff. The --cache-* arguments are
// therefore dropped from the image's command, so opm serve builds its cache at start (seconds for
// a filtered catalog) instead of trusting a stale one.
func pushFilteredCatalog(ctx context.Context, rc *regclient.RegClient, cat ResolvedCatalog, o Options) (ImageResult, error) {
	src, err := readRef(cat.Source, o.SourceRegistry)
	if err != nil {
		return ImageResult{}, err
	}
	img, cfg, err := baseImage(ctx, rc, src, cat.platform, o)
	if err != nil {
		return ImageResult{}, err
	}
	layers, _ := img.GetLayers()
	files := cat.fbc
	cc, _ := cfg["config"].(map[string]any)
	if cc == nil {
		cc = map[string]any{}
		cfg["config"] = cc
	}
	labels, _ := cc["Labels"].(map[string]any)
	dir, _ := labels[ConfigsLabel].(string)
	dir = strings.Trim(dir, "/")
	entries := map[string][]byte{path.Join(dir, ".wh..wh..opq"): nil}
	for name, data := range files {
		entries[path.Join(dir, name)] = data
	}
	cmd, cacheDir := dropCacheArgs(cc["Cmd"])
	if cacheDir != "" {
		entries[path.Join(strings.Trim(cacheDir, "/"), ".wh..wh..opq")] = nil
	}
	if cmd != nil {
		cc["Cmd"] = cmd
	}
	layer, diffID, err := tarGz(entries)
	if err != nil {
		return ImageResult{}, err
	}
	dst, err := ref.New(cat.Dest)
	if err != nil {
		return ImageResult{}, fmt.Errorf("destination %q: %w", cat.Dest, err)
	}
	if dst.Tag == "" {
		dst.Tag = "latest"
	}
	dst = dst.SetTag(dst.Tag)
	dgst, size, err := appendLayer(ctx, rc, src, dst, layers, layer, diffID, cfg,
		"bootstrap mirror: filtered catalog ("+strings.Join(cat.Packages, ",")+")", o)
	if err != nil {
		return ImageResult{}, err
	}
	return ImageResult{Image: Image{Source: cat.Source, Dest: repoOnly(cat.Dest) + ":" + dst.Tag, Kind: KindCatalog},
		Digest: dgst, Size: size}, nil
}

// dropCacheArgs removes opm's --cache-dir, --cache-only and --cache-enforce-integrity arguments
// from an image command, returning the new command and the cache directory it named.
func dropCacheArgs(v any) ([]any, string) {
	args, ok := v.([]any)
	if !ok {
		return nil, ""
	}
	out, dir := []any{}, ""
	for i := 0; i < len(args); i++ {
		s, _ := args[i].(string)
		name, val, hasVal := strings.Cut(s, "=")
		switch name {
		case "--cache-dir":
			if !hasVal && i+1 < len(args) {
				i++
				val, _ = args[i].(string)
			}
			dir = val
			continue
		case "--cache-only", "--cache-enforce-integrity":
			continue
		}
		out = append(out, args[i])
	}
	return out, dir
}

// tarGz builds a gzip'd tar of the entries (a nil value is an empty whiteout marker) in name
// order, returning the blob and the uncompressed tar's digest (the layer's diff ID).
func tarGz(entries map[string][]byte) ([]byte, digest.Digest, error) {
	var tb bytes.Buffer
	tw := tar.NewWriter(&tb)
	for _, n := range sortedKeys(entries) {
		if err := tw.WriteHeader(&tar.Header{Name: n, Mode: 0o644, Size: int64(len(entries[n])), Typeflag: tar.TypeReg}); err != nil {
			return nil, "", err
		}
		if _, err := tw.Write(entries[n]); err != nil {
			return nil, "", err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, "", err
	}
	diffID := digest.FromBytes(tb.Bytes())
	var gb bytes.Buffer
	gz := gzip.NewWriter(&gb)
	if _, err := gz.Write(tb.Bytes()); err != nil {
		return nil, "", err
	}
	if err := gz.Close(); err != nil {
		return nil, "", err
	}
	return gb.Bytes(), diffID, nil
}

// repoOnly strips the tag and digest of a reference.
func repoOnly(r string) string {
	r, _, _ = strings.Cut(r, "@")
	if i := strings.LastIndex(r, ":"); i > strings.LastIndex(r, "/") {
		r = r[:i]
	}
	return r
}
