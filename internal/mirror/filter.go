package mirror

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/operator-framework/operator-registry/alpha/declcfg"
	cfilter "github.com/sherine-k/catalog-filter/pkg/filter/mirror-config/v1alpha1"
	"github.com/sirupsen/logrus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Operator catalog selection is oc-mirror v2's own: the catalog filter library oc-mirror 4.18 and
// later call (github.com/sherine-k/catalog-filter, v0.0.5), fed the same filter configuration
// oc-mirror builds from an ImageSetConfiguration entry (internal/pkg/operator/catalog_handler.go):
//
//   - no packages, full false: the head of every channel of every package;
//   - no packages, full true: the catalog image as it is, not rebuilt;
//   - a package alone: the head of each of its channels;
//   - a package with minVersion/maxVersion: the range ">=min <=max", applied to every channel of
//     the package; channels the range empties are dropped, an emptied default channel is an error;
//   - listed channels: only those, each its head, or its range when it has one (a package-level
//     range applies to listed channels without their own);
//   - full true with packages: every bundle of the selected channels;
//   - a range leaves out pre-releases (4.14.0-202405000000) unless a bound is itself one
//     (Masterminds semver constraints);
//   - a range that ends below a channel's head keeps the bundles up the replaces chain that one
//     head needs (oc-mirror warns, naming each; so does this, in Filtered.Warnings);
//   - defaultChannel overrides the package's default; it must be kept; when the package's own
//     default is not kept and none is configured, it is an error (oc-mirror's "the default
//     channel was filtered out, a new default channel must be configured").
//
// Where oc-mirror is silent this refuses what a field engineer would not want mirrored silently:
// a package or channel the catalog does not have is an error naming the closest names.

// Filtered is one filtered catalog: the file-based catalog to push and what oc-mirror warned.
type Filtered struct {
	DC       *declcfg.DeclarativeConfig
	Warnings []string
}

// CatalogError is a catalog entry that cannot be filtered or whose result opm would refuse.
type CatalogError struct {
	Catalog string // the catalog image as configured
	At      string // "isc.yaml:12: mirror.operators[0].packages[1]", when known
	Err     error
	remedy  string
}

func (e *CatalogError) Error() string {
	s := "catalog " + e.Catalog + ": " + e.Err.Error()
	if e.At != "" {
		s = e.At + ": " + s
	}
	if e.remedy != "" {
		s += ": " + e.remedy
	}
	return s
}

func (e *CatalogError) Unwrap() error { return e.Err }

// Remedy says how to fix the configuration.
func (e *CatalogError) Remedy() string { return e.remedy }

// filterConfig is the filter configuration oc-mirror builds for one ImageSetConfiguration entry.
func filterConfig(op ISCOperator) cfilter.FilterConfiguration {
	rng := func(lo, hi string) string {
		r := ""
		if lo != "" {
			r = ">=" + lo
		}
		if hi != "" {
			r += " <=" + hi
		}
		return r
	}
	fc := cfilter.FilterConfiguration{
		TypeMeta: metav1.TypeMeta{Kind: cfilter.FilterKind, APIVersion: cfilter.FilterAPIVersion},
		Packages: make([]cfilter.Package, 0, len(op.Packages)),
	}
	for _, p := range op.Packages {
		fp := cfilter.Package{Name: p.Name, DefaultChannel: p.DefaultChannel, VersionRange: rng(p.MinVersion, p.MaxVersion)}
		for _, ch := range p.Channels {
			fp.Channels = append(fp.Channels, cfilter.Channel{Name: ch.Name, VersionRange: rng(ch.MinVersion, ch.MaxVersion)})
		}
		fc.Packages = append(fc.Packages, fp)
	}
	return fc
}

// warnHook collects the filter's warnings instead of printing them.
type warnHook struct{ msgs []string }

func (h *warnHook) Levels() []logrus.Level { return []logrus.Level{logrus.WarnLevel} }
func (h *warnHook) Fire(e *logrus.Entry) error {
	h.msgs = append(h.msgs, e.Message)
	return nil
}

// FilterCatalog selects from dc what oc-mirror v2 selects for the catalog entry op (at names the
// entry for errors, "mirror.operators[0]"; isc may be nil). The result is validated with
// operator-registry's model (one head per channel, default channel present, every entry's bundle
// present, deprecations consistent): what it returns, opm serves.
func FilterCatalog(ctx context.Context, dc *declcfg.DeclarativeConfig, op ISCOperator, isc *ImageSetConfig, at string) (*Filtered, error) {
	where := func(path string) string {
		if isc == nil {
			return path
		}
		return isc.At(path)
	}
	if err := checkNames(dc, op, where, at); err != nil {
		return nil, err
	}
	if len(op.Packages) == 0 && op.Full {
		return &Filtered{DC: dc}, validateCatalog(op, isc, at, dc)
	}
	out, warns, err := runFilter(ctx, dc, op)
	if err != nil {
		// attribute the error to the package entry that causes it (the library reports the first)
		for j, p := range op.Packages {
			one := op
			one.Packages = []ISCPackage{p}
			if _, _, perr := runFilter(ctx, dc, one); perr != nil {
				return nil, packageError(op, p, dc, where(fmt.Sprintf("%s.packages[%d]", at, j)), perr)
			}
		}
		return nil, &CatalogError{Catalog: op.Catalog, At: where(at), Err: err}
	}
	pruneDeprecations(out)
	if err := validateCatalog(op, isc, at, out); err != nil {
		return nil, err
	}
	return &Filtered{DC: out, Warnings: warns}, nil
}

// runFilter calls the catalog filter library as oc-mirror does.
func runFilter(ctx context.Context, dc *declcfg.DeclarativeConfig, op ISCOperator) (*declcfg.DeclarativeConfig, []string, error) {
	fc := filterConfig(op)
	if err := fc.Validate(); err != nil {
		return nil, nil, fmt.Errorf("failed to validate catalog filter: %w", err)
	}
	l := logrus.New()
	l.SetOutput(io.Discard)
	h := &warnHook{}
	l.AddHook(h)
	in := copyDC(dc) // the library edits channel entries in place
	out, err := cfilter.NewMirrorFilter(fc, cfilter.InFull(op.Full), cfilter.WithLogger(logrus.NewEntry(l))).FilterCatalog(ctx, in)
	if err != nil {
		return nil, nil, err
	}
	return out, h.msgs, nil
}

// copyDC copies the parts of a declarative config the filter changes in place (packages, channels
// and their entries, deprecations and their entries), sharing the rest: the filter builds new
// bundle and other slices, so those are shared (a copy of 50,000 bundles would cost memory).
func copyDC(dc *declcfg.DeclarativeConfig) *declcfg.DeclarativeConfig {
	c := *dc
	c.Packages = append([]declcfg.Package(nil), dc.Packages...)
	c.Channels = make([]declcfg.Channel, len(dc.Channels))
	for i, ch := range dc.Channels {
		ch.Entries = append([]declcfg.ChannelEntry(nil), ch.Entries...)
		c.Channels[i] = ch
	}
	c.Deprecations = make([]declcfg.Deprecation, len(dc.Deprecations))
	for i, d := range dc.Deprecations {
		d.Entries = append([]declcfg.DeprecationEntry(nil), d.Entries...)
		c.Deprecations[i] = d
	}
	return &c
}

// pruneDeprecations drops olm.deprecations entries about channels or bundles the filter left out
// (the library keeps a deprecated channel's entry when the range emptied that channel), and
// deprecations of packages left out, so that the model's deprecation check holds.
func pruneDeprecations(dc *declcfg.DeclarativeConfig) {
	pkgs := map[string]bool{}
	for _, p := range dc.Packages {
		pkgs[p.Name] = true
	}
	chans, bundles := map[string]bool{}, map[string]bool{}
	for _, c := range dc.Channels {
		chans[c.Package+"/"+c.Name] = true
	}
	for _, b := range dc.Bundles {
		bundles[b.Package+"/"+b.Name] = true
	}
	kept := dc.Deprecations[:0]
	for _, d := range dc.Deprecations {
		if !pkgs[d.Package] {
			continue
		}
		entries := d.Entries[:0:0]
		for _, e := range d.Entries {
			switch e.Reference.Schema {
			case declcfg.SchemaChannel:
				if !chans[d.Package+"/"+e.Reference.Name] {
					continue
				}
			case declcfg.SchemaBundle:
				if !bundles[d.Package+"/"+e.Reference.Name] {
					continue
				}
			}
			entries = append(entries, e)
		}
		if len(entries) > 0 {
			d.Entries = entries
			kept = append(kept, d)
		}
	}
	dc.Deprecations = kept
}

// packageError explains a filter error of one package entry, with the remedy.
func packageError(op ISCOperator, p ISCPackage, dc *declcfg.DeclarativeConfig, at string, err error) error {
	e := &CatalogError{Catalog: op.Catalog, At: at, Err: fmt.Errorf("package %s: %w", p.Name, unwrapFilter(err))}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "was filtered out, a new default channel must be configured"),
		strings.Contains(msg, "specified default channel override"):
		kept := make([]string, 0, len(p.Channels))
		for _, ch := range p.Channels {
			kept = append(kept, ch.Name)
		}
		if len(kept) == 0 {
			kept = channelNames(dc, p.Name)
		}
		e.remedy = fmt.Sprintf("set defaultChannel on this package to a channel it keeps (%s)", strings.Join(kept, ", "))
	case strings.Contains(msg, "results in an empty channel"):
		e.remedy = "widen minVersion/maxVersion to include at least one bundle of that channel (the package's versions: " + versionSpan(dc, p.Name) + ")"
	}
	return e
}

// unwrapFilter drops oc-mirror's "failed to filter catalog" style prefixes the library adds.
func unwrapFilter(err error) error {
	if u := errors.Unwrap(err); u != nil {
		return u
	}
	return err
}

// WriteFBC renders a declarative config as oc-mirror writes a filtered catalog: one JSON stream
// per package, PACKAGE/catalog.json (its package, channels, bundles, deprecations and other
// documents), and catalog.json for documents of no package.
func WriteFBC(dc *declcfg.DeclarativeConfig) (map[string][]byte, error) {
	by := map[string]*declcfg.DeclarativeConfig{}
	get := func(pkg string) *declcfg.DeclarativeConfig {
		if by[pkg] == nil {
			by[pkg] = &declcfg.DeclarativeConfig{}
		}
		return by[pkg]
	}
	for _, p := range dc.Packages {
		get(p.Name).Packages = append(get(p.Name).Packages, p)
	}
	for _, c := range dc.Channels {
		get(c.Package).Channels = append(get(c.Package).Channels, c)
	}
	for _, b := range dc.Bundles {
		get(b.Package).Bundles = append(get(b.Package).Bundles, b)
	}
	for _, d := range dc.Deprecations {
		if len(d.Entries) > 0 {
			get(d.Package).Deprecations = append(get(d.Package).Deprecations, d)
		}
	}
	for _, o := range dc.Others {
		get(o.Package).Others = append(get(o.Package).Others, o)
	}
	files := map[string][]byte{}
	for pkg, part := range by {
		var buf bytes.Buffer
		if err := declcfg.WriteJSON(*part, &buf); err != nil {
			return nil, fmt.Errorf("package %s: %w", pkg, err)
		}
		name := "catalog.json"
		if pkg != "" {
			name = pkg + "/catalog.json"
		}
		files[name] = buf.Bytes()
	}
	return files, nil
}

// bundleVersion is a bundle's olm.package version.
func bundleVersion(b declcfg.Bundle) string {
	for _, p := range b.Properties {
		if p.Type == "olm.package" {
			var v struct {
				Version string `json:"version"`
			}
			if err := json.Unmarshal(p.Value, &v); err == nil {
				return v.Version
			}
		}
	}
	return ""
}

// Images returns a filtered catalog's bundle images and related images (bundles first), each
// deduplicated and sorted.
func (f *Filtered) Images() (bundles, related []string) {
	bs, rs := map[string]bool{}, map[string]bool{}
	for _, b := range f.DC.Bundles {
		if b.Image != "" {
			bs[b.Image] = true
		}
	}
	for _, b := range f.DC.Bundles {
		for _, ri := range b.RelatedImages {
			if ri.Image != "" && !bs[ri.Image] {
				rs[ri.Image] = true
			}
		}
	}
	return sortedKeys(bs), sortedKeys(rs)
}

// Packages returns the names of the packages kept.
func (f *Filtered) Packages() []string {
	out := make([]string, 0, len(f.DC.Packages))
	for _, p := range f.DC.Packages {
		out = append(out, p.Name)
	}
	sort.Strings(out)
	return out
}
