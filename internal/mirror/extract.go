package mirror

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/regclient/regclient"
	"github.com/regclient/regclient/types/manifest"
	"github.com/regclient/regclient/types/platform"
	"github.com/regclient/regclient/types/ref"
)

// ErrFileNotFound is returned by ExtractFile when no layer holds the file, or a later layer
// deleted it (a whiteout).
var ErrFileNotFound = errors.New("file not in image")

// Extracted is what ExtractFile read.
type Extracted struct {
	// Image is the platform image the file came from, by digest.
	Image string `json:"image"`
	// Layer is the digest of the layer holding the file.
	Layer string `json:"layer"`
	Size  int64  `json:"size"`
	Mode  int64  `json:"mode"`
	// LayersRead and BytesRead are what was downloaded: layers from the last one down to the
	// one holding the file, compressed bytes.
	LayersRead int   `json:"layersRead"`
	BytesRead  int64 `json:"bytesRead"`
}

// ExtractFile writes the regular file at name (a path in the image's filesystem, "usr/bin/x") of
// image, for plat when the image is an index, to w, reading layers as a container runtime stacks
// them: the last layer that has the file wins, and a whiteout in a later layer (".wh.x" beside
// it, ".wh..wh..opq" in a directory above it, or a directory above it replaced by a file) hides
// it. Layers are read from the last to the first and reading stops at the layer that decides, so
// base layers are never downloaded. Every layer read is read to its end: regclient then checks
// its digest. Layers may be gzip, zstd or uncompressed tar.
func ExtractFile(ctx context.Context, image, plat, name string, w io.Writer, o Options) (*Extracted, error) {
	rc, r, err := sourceClient(image, o)
	if err != nil {
		return nil, err
	}
	m, err := platformImage(ctx, rc, r, plat)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", image, err)
	}
	if err := checkPlatform(ctx, rc, r, m, plat); err != nil {
		return nil, fmt.Errorf("%s: %w", image, err)
	}
	layers, err := m.(manifest.Imager).GetLayers()
	if err != nil {
		return nil, err
	}
	name = strings.TrimPrefix(path.Clean("/"+name), "/")
	out := &Extracted{Image: r.SetDigest(m.GetDescriptor().Digest.String()).CommonName()}
	for i := len(layers) - 1; i >= 0; i-- {
		l := layers[i]
		out.LayersRead++
		res, err := extractFromLayer(ctx, rc, r, l.Digest.String(), l.Size, name, w)
		out.BytesRead += res.read
		if err != nil {
			return out, fmt.Errorf("%s: layer %s: %w", image, l.Digest, err)
		}
		switch {
		case res.found:
			out.Layer, out.Size, out.Mode = l.Digest.String(), res.size, res.mode
			return out, nil
		case res.deleted != "":
			return out, fmt.Errorf("%s: %s deleted by %s in layer %d (%s): %w", image, name, res.deleted, i+1, l.Digest, ErrFileNotFound)
		}
	}
	return out, fmt.Errorf("%s: no layer holds %s: %w", image, name, ErrFileNotFound)
}

// checkPlatform refuses a single-platform image built for another platform than plat: a binary
// for another architecture would only fail later, when run.
func checkPlatform(ctx context.Context, rc *regclient.RegClient, r ref.Ref, m manifest.Manifest, plat string) error {
	if plat == "" {
		return nil
	}
	want, err := platform.Parse(plat)
	if err != nil {
		return err
	}
	cd, err := m.(manifest.Imager).GetConfig()
	if err != nil {
		return err
	}
	cfg, err := rc.BlobGetOCIConfig(ctx, r, cd)
	if err != nil {
		return fmt.Errorf("image config: %w", err)
	}
	c := cfg.GetConfig()
	if c.Architecture != "" && (c.Architecture != want.Architecture || (c.OS != "" && c.OS != want.OS)) {
		return fmt.Errorf("image is built for %s/%s, not %s", c.OS, c.Architecture, plat)
	}
	return nil
}

type layerResult struct {
	found      bool
	size, mode int64
	deleted    string // the whiteout entry that hides the file, if any
	read       int64
}

// extractFromLayer streams one layer: a regular file at name is copied to w; a hard link to
// another entry of the same layer makes it read the layer again for that entry.
func extractFromLayer(ctx context.Context, rc *regclient.RegClient, r ref.Ref, dig string, size int64, name string, w io.Writer) (layerResult, error) {
	var res layerResult
	target := name
	for hops := 0; hops < 8; hops++ {
		link, err := scanLayerFor(ctx, rc, r, dig, size, name, target, w, &res)
		if err != nil || link == "" {
			return res, err
		}
		target = link
	}
	return res, fmt.Errorf("%s: too many hard links", name)
}

// scanLayerFor reads the layer once. name is the file asked for (whiteouts are about it); target
// is the entry whose content is wanted (name, or what a hard link at name points to). It returns
// the link target when name is a hard link.
func scanLayerFor(ctx context.Context, rc *regclient.RegClient, r ref.Ref, dig string, size int64, name, target string,
	w io.Writer, res *layerResult) (string, error) {
	dir, base := path.Split(name)
	whiteout := dir + ".wh." + base
	link := ""
	read, err := readLayer(ctx, rc, r, dig, size, func(entry string, h *tar.Header, tr *tar.Reader) error {
		switch {
		case entry == target && target != name:
			if h.Typeflag != tar.TypeReg {
				return fmt.Errorf("%s is a hard link to %s, which is not a regular file", name, target)
			}
			return copyEntry(w, tr, h, res)
		case entry == name && target == name:
			switch h.Typeflag {
			case tar.TypeReg:
				return copyEntry(w, tr, h, res)
			case tar.TypeLink:
				link = strings.TrimPrefix(path.Clean("/"+h.Linkname), "/")
			case tar.TypeSymlink:
				return fmt.Errorf("%s is a symbolic link to %s; extract the file it points to", name, h.Linkname)
			default:
				res.deleted = fmt.Sprintf("a %q entry (not a regular file)", string(h.Typeflag))
			}
		case entry == whiteout:
			res.deleted = "whiteout " + entry
		case isAncestorWhiteout(entry, name):
			res.deleted = "whiteout " + entry
		case strings.HasPrefix(name, entry+"/") && h.Typeflag != tar.TypeDir:
			res.deleted = entry + " (a directory above it, replaced by a non-directory)"
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	res.read += read
	if res.found {
		res.deleted = "" // an opaque directory hides lower layers only, not the file beside it
	}
	return link, nil
}

// isAncestorWhiteout reports whether entry deletes a directory above name (".wh.usr" for
// usr/bin/x) or makes one opaque ("usr/bin/.wh..wh..opq").
func isAncestorWhiteout(entry, name string) bool {
	dir, base := path.Split(entry)
	if !strings.HasPrefix(base, ".wh.") {
		return false
	}
	if base == ".wh..wh..opq" {
		return dir == "" || strings.HasPrefix(name, dir)
	}
	deleted := dir + strings.TrimPrefix(base, ".wh.")
	return strings.HasPrefix(name, deleted+"/")
}

func copyEntry(w io.Writer, tr *tar.Reader, h *tar.Header, res *layerResult) error {
	n, err := io.Copy(w, tr)
	if err != nil {
		return fmt.Errorf("copy %s: %w", h.Name, err)
	}
	if n != h.Size {
		return fmt.Errorf("copy %s: %d of %d bytes", h.Name, n, h.Size)
	}
	res.found, res.size, res.mode = true, n, h.Mode
	return nil
}
