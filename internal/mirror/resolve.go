package mirror

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"unicode"

	"github.com/regclient/regclient/types/ref"
)

// DefaultReleaseRepo is where oc-mirror looks up releases named by version.
const DefaultReleaseRepo = "quay.io/openshift-release-dev/ocp-release"

// ResolvedCatalog is one catalog with what its filter selected.
type ResolvedCatalog struct {
	Name     string   // CatalogSource name: targetCatalog's last path element or the repository's
	Source   string   // catalog image as configured
	Packages []string // selected packages
	// Advertised are the selected bundle and related images (source references).
	Advertised []string

	// Dest is where the catalog image goes (targetCatalog and targetTag applied).
	Dest string
	// Warnings are the filter's: bundles outside a range kept so each channel has one head.
	Warnings []string

	filtered bool              // rebuilt with only the selection (anything but full with no packages)
	fbc      map[string][]byte // the filtered file-based catalog, file name -> content
	platform string
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
func Resolve(ctx context.Context, isc *ImageSetConfig, t Dest, o Options) (*Resolved, error) {
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
	for i := range isc.Mirror.Operators {
		rcat, ims, err := resolveCatalog(ctx, isc, i, "linux/"+catArch, t, o)
		if err != nil {
			return nil, err
		}
		res.Catalogs = append(res.Catalogs, *rcat)
		res.Images = append(res.Images, ims...)
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

// resolveCatalog reads and filters the catalog of mirror.operators[i] and returns it with the
// images it needs mirrored: the catalog image itself when it is mirrored whole, the selected
// bundles and their related images.
func resolveCatalog(ctx context.Context, isc *ImageSetConfig, i int, plat string, t Dest, o Options) (*ResolvedCatalog, []Image, error) {
	op := isc.Mirror.Operators[i]
	at := fmt.Sprintf("mirror.operators[%d]", i)
	names := make([]string, 0, len(op.Packages))
	for _, p := range op.Packages {
		names = append(names, p.Name)
	}
	cr, err := readCatalogLight(ctx, op.Catalog, plat, o, !op.Full || len(op.Packages) > 0, names...)
	if err != nil {
		return nil, nil, &CatalogError{Catalog: op.Catalog, At: isc.At(at + ".catalog"), Err: err}
	}
	f, err := FilterCatalog(ctx, cr.dc, op, isc, at)
	if err != nil {
		return nil, nil, err
	}
	rcat := &ResolvedCatalog{Name: catalogName(op), Source: op.Catalog, Packages: f.Packages(), Dest: CatalogDest(op, t.Host, t.Namespace),
		Warnings: f.Warnings, filtered: !op.Full || len(op.Packages) > 0, platform: plat}
	var ims []Image
	if rcat.filtered {
		// the selection's full bundle documents, validated again whole before anything is pushed
		if err := cr.fullBundles(ctx, o, f.DC); err != nil {
			return nil, nil, &CatalogError{Catalog: op.Catalog, At: isc.At(at + ".catalog"), Err: err}
		}
		if err := validateCatalog(op, isc, at, f.DC); err != nil {
			return nil, nil, err
		}
		if rcat.fbc, err = WriteFBC(f.DC); err != nil {
			return nil, nil, &CatalogError{Catalog: op.Catalog, At: isc.At(at), Err: err}
		}
	} else { // the whole catalog is the selection: mirror the image as it is
		ims = append(ims, Image{Source: op.Catalog, Dest: rcat.Dest, Kind: KindCatalog})
	}
	bundles, related := f.Images()
	rcat.Advertised = append(append([]string(nil), bundles...), related...)
	sort.Strings(rcat.Advertised)
	b, err := Images(bundles, KindBundle, op.Catalog, t.Host, t.Namespace)
	if err != nil {
		return nil, nil, err
	}
	r, err := Images(related, KindRelated, op.Catalog, t.Host, t.Namespace)
	if err != nil {
		return nil, nil, err
	}
	return rcat, append(append(ims, b...), r...), nil
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

// catalogName is the CatalogSource name oc-mirror v2 gives a catalog, so that a site's
// Subscriptions written for oc-mirror's resources name the same source: "cs-", the last element of
// the destination repository (targetCatalog's, else the source's), "-", then the destination tag
// (catalogTag) cut to 12 characters, lower-cased, with anything but a-z, 0-9 and "-" turned into
// "-"; "0" when there is none. Dots become dashes: redhat-operator-index:v4.18 is
// cs-redhat-operator-index-v4-18, and a catalog pinned by digest only, pushed under
// sha256-<hex>, is cs-redhat-operator-index-sha256-<5 hex>. oc-mirror derives it from the
// destination reference (openshift/oc-mirror internal/pkg/clusterresources/clusterresources.go,
// generateCatalogSource), and that reference always has a tag (internal/pkg/operator/common.go,
// destCtlgRef), so its by-digest branch is never taken for a mirrored catalog.
func catalogName(op ISCOperator) string {
	_, repo, err := catalogRepo(op)
	if err != nil {
		return ""
	}
	if i := strings.LastIndex(repo, "/"); i >= 0 {
		repo = repo[i+1:]
	}
	tag := catalogTag(op)
	suffix := strings.Map(rfc1035Rune, tag[:min(len(tag), catalogSuffixLen)])
	if suffix == "" {
		suffix = "0"
	}
	return strings.ReplaceAll("cs-"+repo+"-"+suffix, ".", "-")
}

// catalogTag is the tag a catalog is pushed under, oc-mirror v2's rule (openshift/oc-mirror
// internal/pkg/operator/common.go, destCtlgRef): targetTag; else the source's tag (also when it is
// pinned by tag and digest); else, pinned by digest only, "sha256-<hex>" of that digest. So a
// catalog pinned by digest gets a tag of its own, and a later run pinned to another digest adds a
// tag beside it instead of moving one a cluster's CatalogSource may use. (For a filtered catalog
// pinned by digest oc-mirror's mirror-to-mirror run puts a hash of its filter after "sha256-"
// instead; the source digest is what it uses everywhere else, and what bootstrap uses.)
func catalogTag(op ISCOperator) string {
	r, err := ref.New(op.Catalog)
	switch {
	case err != nil:
		return ""
	case op.TargetTag != "":
		return op.TargetTag
	case r.Tag != "":
		return r.Tag
	case r.Digest != "":
		return strings.Replace(r.Digest, ":", "-", 1)
	}
	return ""
}

// catalogSuffixLen is how much of the tag or digest a CatalogSource name keeps (oc-mirror's).
const catalogSuffixLen = 12

// rfc1035Rune lower-cases r and turns what a DNS label may not hold into "-".
func rfc1035Rune(r rune) rune {
	switch r = unicode.ToLower(r); {
	case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-':
		return r
	}
	return '-'
}

// validCatalogSourceName reports whether name can name a CatalogSource (a DNS-1035 label: at most
// 63 characters, a-z, 0-9 and "-", starting with a letter, not ending with "-").
func validCatalogSourceName(name string) bool {
	return len(name) <= 63 && dns1035.MatchString(name)
}

var dns1035 = regexp.MustCompile(`^[a-z]([-a-z0-9]*[a-z0-9])?$`)

// catalogRepo parses a catalog entry's image and returns it with the repository path it is
// mirrored to: targetCatalog's, else the source's.
func catalogRepo(op ISCOperator) (ref.Ref, string, error) {
	r, err := ref.New(op.Catalog)
	if err != nil {
		return r, "", err
	}
	if op.TargetCatalog != "" {
		return r, op.TargetCatalog, nil
	}
	return r, r.Repository, nil
}

// CatalogDest is where a catalog entry's image goes under host/namespace, as oc-mirror v2 names
// it: targetCatalog replaces the repository path; the tag is catalogTag's (a catalog is always
// pushed under a tag, never only by digest).
func CatalogDest(op ISCOperator, host, namespace string) string {
	_, repo, err := catalogRepo(op)
	if err != nil {
		return ""
	}
	if ns := strings.Trim(namespace, "/"); ns != "" {
		repo = ns + "/" + repo
	}
	out := host + "/" + repo
	if tag := catalogTag(op); tag != "" {
		out += ":" + tag
	}
	return out
}
