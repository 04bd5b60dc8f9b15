package upgrade

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/blang/semver/v4"
	"go.yaml.in/yaml/v3"

	"github.com/bootstrap-dev/bootstrap/internal/mirror"
)

// defaultCatalogs maps the default CatalogSources to their index images, per minor (the tag is
// v<minor>). A site's own CatalogSource names are not known here: their bundles are listed in the
// plan's undecided facts instead.
var defaultCatalogs = map[string]string{
	"redhat-operators":    "registry.redhat.io/redhat/redhat-operator-index",
	"certified-operators": "registry.redhat.io/redhat/certified-operator-index",
	"community-operators": "registry.redhat.io/redhat/community-operator-index",
	"redhat-marketplace":  "registry.redhat.io/redhat/redhat-marketplace-index",
}

// mirroredCatalog matches the CatalogSource names oc-mirror v2 and bootstrap mirror give the
// catalogs they mirror (cs-<index repository>-v<major>-<minor>, clusterresources.go): a site
// installed from a mirror subscribes through them, not through the default names.
var mirroredCatalog = regexp.MustCompile(`^cs-(redhat-operator-index|certified-operator-index|community-operator-index|redhat-marketplace-index)-v\d+-\d+$`)

// catalogIndex is the index image (without tag) a CatalogSource name stands for.
func catalogIndex(source string) (string, bool) {
	if idx, ok := defaultCatalogs[source]; ok {
		return idx, true
	}
	if m := mirroredCatalog.FindStringSubmatch(source); m != nil {
		return "registry.redhat.io/redhat/" + m[1], true
	}
	return "", false
}

// Delta is the ImageSetConfiguration that carries what the plan needs and the carried directory
// does not have (content.json): each hop's release not yet carried (a channel of its own minor,
// minVersion = maxVersion = the release, so nothing in between), the operator bundles of the
// steps (their package and channel, from the lowest to the highest version planned, in the
// target minor's catalog) and the driver images. The mirror resolves each release's components,
// signatures and catalogs from it and skips what its destination already holds. notes are what
// could not be put in it.
func Delta(p *Plan, c *Carried) (isc []byte, notes []string, err error) {
	have := func(ref string) bool {
		if c.Images == nil {
			return false
		}
		return c.Images[ref] || c.Images[digestOf(ref)]
	}
	cfg := mirror.ImageSetConfig{APIVersion: mirror.ISCAPIVersion, Kind: mirror.ISCKind}
	if p.Arch != "" {
		cfg.Mirror.Platform.Architectures = []string{p.Arch}
	}
	for _, h := range p.Hops {
		if have(h.Payload) {
			continue
		}
		v := semver.MustParse(h.To)
		cfg.Mirror.Platform.Channels = append(cfg.Mirror.Platform.Channels,
			mirror.ISCChannel{Name: "stable-" + minorOf(v), MinVersion: h.To, MaxVersion: h.To})
	}
	type pkgKey struct{ catalog, pkg, channel string }
	type span struct{ min, max semver.Version }
	pkgs := map[pkgKey]*span{}
	defaults := map[[2]string]string{} // catalog, package -> the catalog's default channel
	var drivers []string
	add := func(k pkgKey, b *stepBundle) {
		if def := b.defaultChannel; def != "" || defaults[[2]string{k.catalog, k.pkg}] == "" {
			defaults[[2]string{k.catalog, k.pkg}] = def
		}
		if sp := pkgs[k]; sp == nil {
			pkgs[k] = &span{b.version, b.version}
		} else {
			if b.version.LT(sp.min) {
				sp.min = b.version
			}
			if b.version.GT(sp.max) {
				sp.max = b.version
			}
		}
	}
	for _, h := range p.Hops {
		tm := minorOfString(h.To)
		fm := minorOfString(h.From)
		for _, s := range append(append([]Step(nil), h.Before...), h.After...) {
			if s.Image == "" || have(s.Image) {
				continue
			}
			if s.bundle == nil {
				if !contains(drivers, s.Image) {
					drivers = append(drivers, s.Image)
				}
				continue
			}
			minor := tm
			if s.before {
				minor = fm
			}
			idx, ok := catalogIndex(s.bundle.source)
			if !ok {
				notes = append(notes, fmt.Sprintf("bundle %s (%s) of CatalogSource %s: neither a default catalog nor one a mirror named, add its index to the ImageSetConfiguration by hand", s.bundle.name, s.Image, s.bundle.source))
				continue
			}
			add(pkgKey{idx + ":v" + minor, s.bundle.pkg, s.bundle.channel}, s.bundle)
		}
		// a Subscription moved to the next minor's CatalogSource with no step of the hop
		// carrying that catalog: carry it with the bundle installed, or the CatalogSource the
		// run's subscriptions step moves it to is never written
		for _, mv := range h.Subscriptions {
			b := mv.bundle
			if b == nil || (b.image != "" && have(b.image)) {
				continue
			}
			idx, ok := catalogIndex(mv.To)
			if !ok {
				notes = append(notes, fmt.Sprintf("Subscription %s moves to CatalogSource %s: not one a mirror names for a Red Hat index, add its %s catalog with package %s (channel %s) to the ImageSetConfiguration by hand", mv.Subject(), mv.To, tm, b.pkg, b.channel))
				continue
			}
			add(pkgKey{idx + ":v" + tm, b.pkg, b.channel}, b)
		}
	}
	keys := make([]pkgKey, 0, len(pkgs))
	for k := range pkgs {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		return a.catalog+"\x00"+a.pkg+"\x00"+a.channel < b.catalog+"\x00"+b.pkg+"\x00"+b.channel
	})
	for _, k := range keys {
		sp := pkgs[k]
		n := len(cfg.Mirror.Operators)
		if n == 0 || cfg.Mirror.Operators[n-1].Catalog != k.catalog {
			cfg.Mirror.Operators = append(cfg.Mirror.Operators, mirror.ISCOperator{Catalog: k.catalog})
			n++
		}
		op := &cfg.Mirror.Operators[n-1]
		ch := mirror.ISCPackageChannel{Name: k.channel, MinVersion: sp.min.String(), MaxVersion: sp.max.String()}
		if m := len(op.Packages); m > 0 && op.Packages[m-1].Name == k.pkg {
			op.Packages[m-1].Channels = append(op.Packages[m-1].Channels, ch)
		} else {
			op.Packages = append(op.Packages, mirror.ISCPackage{Name: k.pkg, Channels: []mirror.ISCPackageChannel{ch}})
		}
	}
	// A package keeps its default channel, or the mirror's catalog filter (oc-mirror's rule)
	// refuses the ISC: name the first channel kept when the default is not among them.
	for i := range cfg.Mirror.Operators {
		op := &cfg.Mirror.Operators[i]
		for j := range op.Packages {
			pk := &op.Packages[j]
			def := defaults[[2]string{op.Catalog, pk.Name}]
			if def != "" && !slices.ContainsFunc(pk.Channels, func(c mirror.ISCPackageChannel) bool { return c.Name == def }) {
				pk.DefaultChannel = pk.Channels[0].Name
			}
		}
	}
	sort.Strings(drivers)
	for _, d := range drivers {
		cfg.Mirror.AdditionalImages = append(cfg.Mirror.AdditionalImages, mirror.ISCImage{Name: d})
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# The delta for the upgrade plan %s -> %s (%d hops): what the plan needs that %s does not hold.\n", p.From, p.To, len(p.Hops), c.Dir)
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(cfg); err != nil {
		return nil, nil, err
	}
	return []byte(b.String()), notes, enc.Close()
}
