package mirror

import (
	"fmt"
	"regexp"

	"github.com/Masterminds/semver/v3"
	"github.com/bootstrap-dev/bootstrap/internal/finding"
	"github.com/regclient/regclient/types/ref"
)

// The checks of mirror.operators are oc-mirror v2's (internal/pkg/config/validate.go and the
// catalog filter's own refusals, as of oc-mirror 4.18–4.20), each with the line of the entry and
// the remedy: where oc-mirror refuses a configuration, so does this, before anything is read.

// targetCatalogPattern is oc-mirror's rule for targetCatalog: path components of lower-case
// alphanumerics joined by '.', '_', '__' or dashes, separated by '/'; no tag, no digest.
var targetCatalogPattern = regexp.MustCompile(`^([a-z0-9]+((?:[._]|__|[-]*)[a-z0-9]+)*)(/([a-z0-9]+((?:[._]|__|[-]*)[a-z0-9]+)*))*$`)

// tagPattern is the OCI distribution rule for a tag.
var tagPattern = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$`)

// validateOperators returns every problem of mirror.operators, each naming its file and line.
func (c *ImageSetConfig) validateOperators() finding.List {
	var errs finding.List
	add := func(path, f string, a ...any) { errs = append(errs, c.problem(path, fmt.Sprintf(f, a...))) }
	catalogs, sources := map[string]string{}, map[string]string{}
	for i, op := range c.Mirror.Operators {
		at := fmt.Sprintf("mirror.operators[%d]", i)
		if op.Catalog == "" {
			add(at+".catalog", "required; write the catalog image (registry.redhat.io/redhat/redhat-operator-index:v4.16, say)")
		} else if r, err := ref.New(op.Catalog); err != nil {
			add(at+".catalog", "%q is not an image reference: %v", op.Catalog, err)
		} else {
			name := CatalogDest(op, r.Registry, "")
			if prev, ok := catalogs[name]; ok {
				add(at, "catalog %q: duplicate found in configuration (also %s): merge the two entries, or give one a targetCatalog or targetTag", name, prev)
			} else if prev, ok := sources[catalogName(op)]; ok {
				// CatalogSources are named after the repository and tag (cut to 12 characters): two would write one file
				add(at, "catalog %q: its CatalogSource would be %s, like the one of %s: give one of them a targetCatalog or targetTag", op.Catalog, catalogName(op), prev)
			} else if cs := catalogName(op); !validCatalogSourceName(cs) {
				add(at, "catalog %q: its CatalogSource name %s is not a valid name (a DNS-1035 label of at most 63 characters): give it a shorter targetCatalog", op.Catalog, cs)
			}
			if _, ok := catalogs[name]; !ok {
				catalogs[name] = at
			}
			if _, ok := sources[catalogName(op)]; !ok {
				sources[catalogName(op)] = at
			}
		}
		if op.TargetCatalog != "" && !targetCatalogPattern.MatchString(op.TargetCatalog) {
			add(at+".targetCatalog", "invalid target path component %q: should not contain a tag or digest; want one or more path components separated by / (lower-case letters and digits, joined by ., _, __ or -), like redhat/filtered-operator-index", op.TargetCatalog)
		}
		if op.TargetTag != "" && !tagPattern.MatchString(op.TargetTag) {
			add(at+".targetTag", "%q is not a valid tag: want up to 128 letters, digits, '.', '_' or '-', not starting with '.' or '-' (v4.16, say)", op.TargetTag)
		}
		pkgs := map[string]string{}
		for j, p := range op.Packages {
			pat := fmt.Sprintf("%s.packages[%d]", at, j)
			if p.Name == "" {
				add(pat+".name", "required; write the package name (openshift-gitops-operator, say)")
			} else if prev, ok := pkgs[p.Name]; ok {
				add(pat, "catalog %q: duplicate package entry %q (also %s): merge the two entries into one", op.Catalog, p.Name, prev)
			} else {
				pkgs[p.Name] = pat
			}
			for _, b := range []struct{ field, v string }{{"minVersion", p.MinVersion}, {"maxVersion", p.MaxVersion}} {
				if b.v == "" {
					continue
				}
				if _, err := semver.NewVersion(b.v); err != nil {
					add(pat+"."+b.field, "%s %q must respect semantic versioning notation (1.2.3)", b.field, b.v)
				}
			}
			pkgRange := p.MinVersion != "" || p.MaxVersion != ""
			chRange := false
			chans := map[string]string{}
			for k, ch := range p.Channels {
				cat := fmt.Sprintf("%s.channels[%d]", pat, k)
				if ch.Name == "" {
					add(cat+".name", "required; write the channel name (stable, say)")
				} else if prev, ok := chans[ch.Name]; ok {
					add(cat, "operator %q: duplicate channel entry %q (also %s): keep one", p.Name, ch.Name, prev)
				} else {
					chans[ch.Name] = cat
				}
				for _, b := range []struct{ field, v string }{{"minVersion", ch.MinVersion}, {"maxVersion", ch.MaxVersion}} {
					if b.v == "" {
						continue
					}
					chRange = true
					if _, err := semver.NewVersion(b.v); err != nil {
						add(cat+"."+b.field, "%s %q must respect semantic versioning notation (1.2.3)", b.field, b.v)
					}
				}
			}
			if pkgRange && chRange {
				add(pat, "operator %q: mixing both filtering by minVersion/maxVersion and filtering by channel minVersion/maxVersion is not allowed: put the range on the package (it applies to every channel) or on the channels, not both", p.Name)
			}
			if op.Full && (pkgRange || chRange) {
				add(pat, "operator %q: full: true cannot be mixed with minVersion/maxVersion (oc-mirror: \"Full: true cannot be mixed with versionRange\"): remove full to mirror the range, or remove the range to mirror every bundle", p.Name)
			}
		}
	}
	return errs
}
