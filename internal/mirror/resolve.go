package mirror

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/regclient/regclient/types/ref"
)

// DefaultReleaseRepo is where oc-mirror looks up releases named by version.
const DefaultReleaseRepo = "quay.io/openshift-release-dev/ocp-release"

// Target is where content goes: docker://Host/Namespace.
type Target struct {
	Host      string
	Namespace string
}

// ResolvedCatalog is one catalog with what its filter selected.
type ResolvedCatalog struct {
	Name     string   // CatalogSource name: targetCatalog's last path element or the repository's
	Source   string   // catalog image as configured
	Packages []string // selected packages
	// Advertised are the selected bundle and related images (source references).
	Advertised []string

	filtered bool // rebuilt with only the selection (anything but full with no packages)
	cat      *Catalog
	sel      Selection
	defaults map[string]string // package -> configured defaultChannel
	platform string
	target   Target
}

// Resolved is an ImageSetConfiguration turned into images.
type Resolved struct {
	Images   []Image
	Catalogs []ResolvedCatalog
	// Blocked are images dropped by blockedImages.
	Blocked []string
}

// Resolve expands an ImageSetConfiguration: release payloads (the release image and every
// component of its image-references), catalogs (the catalog image, the selected bundles and their
// related images) and additional images, minus blocked images, mapped under t. Reading needs only
// manifests, configs and the one layer holding image-references or the catalog.
func Resolve(ctx context.Context, isc *ImageSetConfig, t Target, o Options) (*Resolved, error) {
	o = o.withRun()
	res := &Resolved{}
	add := func(srcs []string, kind Kind, origin string) error {
		ims, err := Images(srcs, kind, origin, t.Host, t.Namespace)
		res.Images = append(res.Images, ims...)
		return err
	}
	archs := isc.Mirror.Platform.Architectures
	if len(archs) == 0 {
		archs = []string{"amd64"}
	}
	type release struct{ image, arch string }
	releases := []release{}
	if isc.Mirror.Platform.Release != "" {
		releases = append(releases, release{isc.Mirror.Platform.Release, archs[0]})
	}
	if len(isc.Mirror.Platform.Channels) > 0 {
		rc, err := newClient(o, hostsOf([]Image{{Source: DefaultReleaseRepo}})...)
		if err != nil {
			return nil, err
		}
		for _, ch := range isc.Mirror.Platform.Channels {
			for _, a := range archs {
				imgs, err := channelReleases(ctx, rc, ch, a, o)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", isc.File, err)
				}
				for _, im := range imgs {
					releases = append(releases, release{im, a})
				}
			}
		}
	}
	for _, r := range releases {
		rel, plat := r.image, "linux/"+r.arch
		if r.arch == "multi" {
			plat = "linux/amd64" // a multi payload's image-references are the same in every platform image
		}
		comps, err := ReleaseComponents(ctx, rel, plat, o)
		if err != nil {
			return nil, err
		}
		if err := add([]string{rel}, KindRelease, ""); err != nil {
			return nil, err
		}
		srcs := make([]string, 0, len(comps))
		for _, c := range comps {
			srcs = append(srcs, c.Image)
		}
		if err := add(srcs, KindReleaseComponent, rel); err != nil {
			return nil, err
		}
	}
	catArch := archs[0]
	if catArch == "multi" {
		catArch = "amd64"
	}
	for _, op := range isc.Mirror.Operators {
		names := make([]string, 0, len(op.Packages))
		for _, p := range op.Packages {
			names = append(names, p.Name)
		}
		c, err := ReadCatalog(ctx, op.Catalog, "linux/"+catArch, o, names...)
		if err != nil {
			return nil, err
		}
		sel, err := Select(c, op)
		if err != nil {
			return nil, fmt.Errorf("%s: catalog %s: %w", isc.File, op.Catalog, err)
		}
		rcat := ResolvedCatalog{Name: catalogName(op), Source: op.Catalog, Packages: sortedKeys(sel), Advertised: sel.Images(c),
			filtered: !op.Full || len(op.Packages) > 0, cat: c, sel: sel, defaults: map[string]string{},
			platform: "linux/" + catArch, target: t}
		for _, p := range op.Packages {
			rcat.defaults[p.Name] = p.DefaultChannel
		}
		res.Catalogs = append(res.Catalogs, rcat)
		if !rcat.filtered { // the whole catalog is the selection: mirror the image as it is
			if err := add([]string{op.Catalog}, KindCatalog, ""); err != nil {
				return nil, err
			}
		}
		var bundles, related []string
		bundleSet := map[string]bool{}
		for pkg, chans := range sel {
			for _, bs := range chans {
				for b := range bs {
					if bd := c.Packages[pkg].Bundles[b]; bd != nil {
						bundleSet[bd.Image] = true
					}
				}
			}
		}
		for _, im := range rcat.Advertised {
			if bundleSet[im] {
				bundles = append(bundles, im)
			} else {
				related = append(related, im)
			}
		}
		if err := add(bundles, KindBundle, op.Catalog); err != nil {
			return nil, err
		}
		if err := add(related, KindRelated, op.Catalog); err != nil {
			return nil, err
		}
	}
	add2 := make([]string, 0, len(isc.Mirror.AdditionalImages))
	for _, a := range isc.Mirror.AdditionalImages {
		add2 = append(add2, a.Name)
	}
	if err := add(add2, KindAdditional, ""); err != nil {
		return nil, err
	}
	res.Images = dedupImages(res.Images)
	if len(isc.Mirror.BlockedImages) > 0 {
		kept := res.Images[:0]
		for _, im := range res.Images {
			if blocked(im.Source, isc.Mirror.BlockedImages) {
				res.Blocked = append(res.Blocked, im.Source)
				continue
			}
			kept = append(kept, im)
		}
		res.Images = kept
	}
	return res, nil
}

// blocked matches oc-mirror v2's blockedImages: a name without tag or digest blocks the whole
// repository; otherwise the entry is a regular expression matched against the reference.
func blocked(src string, list []ISCImage) bool {
	r, err := ref.New(src)
	if err != nil {
		return false
	}
	repo := r.Registry + "/" + r.Repository
	for _, b := range list {
		if b.Name == repo || b.Name == r.Repository {
			return true
		}
		if re, err := regexp.Compile(b.Name); err == nil && re.MatchString(src) {
			return true
		}
	}
	return false
}

// catalogName derives a CatalogSource name: "cs-" plus the catalog repository's last element
// (or targetCatalog's), lower-case, as oc-mirror v2 names them.
func catalogName(op ISCOperator) string {
	n := op.TargetCatalog
	if n == "" {
		if r, err := ref.New(op.Catalog); err == nil {
			n = r.Repository
		}
	}
	if i := strings.LastIndex(n, "/"); i >= 0 {
		n = n[i+1:]
	}
	return "cs-" + strings.ToLower(n)
}
