package mirror

import (
	"archive/tar"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/regclient/regclient"
	"github.com/regclient/regclient/types/descriptor"
	"github.com/regclient/regclient/types/manifest"
	"github.com/regclient/regclient/types/platform"
	"github.com/regclient/regclient/types/ref"
)

// imageRefsPath is where a release payload lists its component images.
const imageRefsPath = "release-manifests/image-references"

// maxFileSize bounds files read whole from layers (image-references); catalogs are streamed.
const maxFileSize = 64 << 20

// ReleaseComponent is one image of a release payload.
type ReleaseComponent struct {
	Name  string `json:"name"`  // "cli", "machine-config-operator", ...
	Image string `json:"image"` // by digest
}

// imageStream is the subset of the image-references ImageStream we read.
type imageStream struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name string `json:"name"` // the release name: its version ("4.16.3")
	} `json:"metadata"`
	Spec struct {
		Tags []struct {
			Name string `json:"name"`
			From struct {
				Kind string `json:"kind"`
				Name string `json:"name"`
			} `json:"from"`
		} `json:"tags"`
	} `json:"spec"`
}

// ReleaseComponents reads release-manifests/image-references from the release image, for the
// platform given ("linux/amd64") when the release image is an index. Layers are read from the last
// to the first and reading stops at the layer holding the file, so the payload's base layers are
// never downloaded.
func ReleaseComponents(ctx context.Context, releaseImage, plat string, o Options) ([]ReleaseComponent, error) {
	rel, err := ReadRelease(ctx, releaseImage, plat, o)
	if err != nil {
		return nil, err
	}
	return rel.Components, nil
}

// ReleaseInfo is what a release payload says about itself in its image-references.
type ReleaseInfo struct {
	// Name is the release's name, its version ("4.16.3").
	Name       string
	Components []ReleaseComponent
	// Multi is set when the release image is an index (a multi-architecture payload).
	Multi bool
}

// Component returns the image of the named component and whether the release has it.
func (r *ReleaseInfo) Component(name string) (string, bool) {
	for _, c := range r.Components {
		if c.Name == name {
			return c.Image, true
		}
	}
	return "", false
}

// ReadRelease reads release-manifests/image-references as ReleaseComponents does, with the
// release's name.
func ReadRelease(ctx context.Context, releaseImage, plat string, o Options) (*ReleaseInfo, error) {
	rc, r, err := sourceClient(releaseImage, o)
	if err != nil {
		return nil, err
	}
	info := &ReleaseInfo{}
	if m, err := rc.ManifestHead(ctx, r); err == nil {
		info.Multi = m.IsList()
	}
	var found []byte
	o = o.withRun()
	err = o.retry(ctx, []string{r.Registry}, func(ctx context.Context) error {
		found = nil
		return scanImageFiles(ctx, rc, r, plat, func(name string) bool { return name == imageRefsPath },
			func(name string, rd io.Reader) (bool, error) {
				data, err := readCapped(name, rd)
				found = data
				return true, err
			})
	})
	if err != nil {
		return nil, fmt.Errorf("release %s: %w", releaseImage, err)
	}
	if found == nil {
		return nil, fmt.Errorf("release %s: no %s in any layer; is it a release payload?", releaseImage, imageRefsPath)
	}
	var is imageStream
	if err := json.Unmarshal(found, &is); err != nil {
		return nil, fmt.Errorf("release %s: %s: %w", releaseImage, imageRefsPath, err)
	}
	info.Name = is.Metadata.Name
	info.Components = make([]ReleaseComponent, 0, len(is.Spec.Tags))
	for _, t := range is.Spec.Tags {
		// the payload is a peer's: its names reach content.json, the IDMS and the journal
		if len(t.Name) > maxComponentName || len(t.From.Name) > maxPeerRef {
			return nil, fmt.Errorf("release %s: %s: a component name of %d bytes or an image reference of %d bytes, more than the %d and %d a release payload may hold; is it a release payload?",
				releaseImage, imageRefsPath, len(t.Name), len(t.From.Name), maxComponentName, maxPeerRef)
		}
		if t.From.Kind != "DockerImage" || !strings.Contains(t.From.Name, "@sha256:") {
			return nil, fmt.Errorf("release %s: component %q is not pinned by digest (%q)", releaseImage, t.Name, t.From.Name)
		}
		info.Components = append(info.Components, ReleaseComponent{Name: t.Name, Image: t.From.Name})
	}
	return info, nil
}

// Caps on what a release payload's image-references may name, as an ISC's own (isc.go): a
// component is a DNS label-like name, an image reference at most 1024 characters.
const (
	maxComponentName = 253
	maxPeerRef       = 1024
)

// scanImageFiles resolves r to one platform's image and streams its layers, last first, calling
// found with a reader of every regular file want accepts (valid until found returns). found returns stop=true to end the scan after the
// current layer (later files of that layer are still delivered).
func scanImageFiles(ctx context.Context, rc *regclient.RegClient, r ref.Ref, plat string,
	want func(name string) bool, found func(name string, r io.Reader) (stop bool, err error)) error {
	return scanImageFilesAt(ctx, rc, r, plat, want, found, nil)
}

// scanImageFilesAt is scanImageFiles that also records, in at, the layer where the scan stopped.
func scanImageFilesAt(ctx context.Context, rc *regclient.RegClient, r ref.Ref, plat string,
	want func(name string) bool, found func(name string, r io.Reader) (stop bool, err error), at *descriptor.Descriptor) error {
	img, err := platformImage(ctx, rc, r, plat)
	if err != nil {
		return err
	}
	layers, err := img.(manifest.Imager).GetLayers()
	if err != nil {
		return err
	}
	for i := len(layers) - 1; i >= 0; i-- {
		stop, err := scanLayer(ctx, rc, r, layers[i].Digest.String(), layers[i].Size, want, found)
		if err != nil {
			return fmt.Errorf("layer %s: %w", layers[i].Digest, err)
		}
		if stop {
			if at != nil {
				*at = layers[i]
			}
			return nil
		}
	}
	return nil
}

// platformImage returns the image manifest for plat, descending into an index.
func platformImage(ctx context.Context, rc *regclient.RegClient, r ref.Ref, plat string) (manifest.Manifest, error) {
	m, err := rc.ManifestGet(ctx, r)
	if err != nil {
		return nil, err
	}
	if m.IsList() {
		p, err := platform.Parse(plat)
		if err != nil {
			return nil, err
		}
		d, err := manifest.GetPlatformDesc(m, &p)
		if err != nil {
			return nil, permanent(fmt.Errorf("no %s image in index: %w", plat, err))
		}
		m, err = rc.ManifestGet(ctx, r.SetDigest(d.Digest.String()))
		if err != nil {
			return nil, err
		}
	}
	if _, ok := m.(manifest.Imager); !ok {
		return nil, permanent(fmt.Errorf("%s is not an image (media type %s)", r.CommonName(), m.GetDescriptor().MediaType))
	}
	return m, nil
}

// scanLayer reads one layer, passing each regular file want accepts to found; stop is true when
// found said so for a file of this layer.
func scanLayer(ctx context.Context, rc *regclient.RegClient, r ref.Ref, dig string, size int64,
	want func(string) bool, found func(string, io.Reader) (bool, error)) (bool, error) {
	stop := false
	_, err := readLayer(ctx, rc, r, dig, size, func(name string, h *tar.Header, tr *tar.Reader) error {
		if h.Typeflag != tar.TypeReg || !want(name) {
			return nil
		}
		s, err := found(name, &readErr{r: tr})
		var re *readError
		if errors.As(err, &re) {
			return re.err // the layer stream broke: worth a retry
		}
		if err != nil {
			return permanent(err)
		}
		stop = stop || s
		return nil
	})
	if errors.Is(err, errBadLayer) {
		err = permanent(err)
	}
	return stop, err
}

// readErr marks errors of the layer stream itself, so that a found callback's parse error (the
// content is wrong: permanent) is told apart from a broken transfer (temporary).
type readErr struct{ r io.Reader }

type readError struct{ err error }

func (e *readError) Error() string { return e.err.Error() }
func (e *readError) Unwrap() error { return e.err }

func (r *readErr) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		err = &readError{err}
	}
	return n, err
}

// readCapped reads a whole file of at most maxFileSize bytes.
func readCapped(name string, r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxFileSize {
		return nil, permanent(fmt.Errorf("%s is more than %d bytes", name, maxFileSize))
	}
	return data, nil
}
