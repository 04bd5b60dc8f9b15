package mirror

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/operator-framework/operator-registry/alpha/declcfg"
)

// validateCatalog validates a filtered catalog in-process with operator-registry's model (what
// opm serve does at start). A selection that would not serve is refused before anything is
// pushed, naming the ISC line of the package or channel entry that selected it (the catalog
// entry when the package was selected whole), the package and channel at fault, and the fix.
// oc-mirror pushes such a selection as it is, and its CatalogSource pod crash-loops.
func validateCatalog(op ISCOperator, isc *ImageSetConfig, at string, dc *declcfg.DeclarativeConfig) error {
	_, err := declcfg.ConvertToModel(*dc)
	if err == nil {
		return nil
	}
	pkg, ch := brokenPart(dc)
	field, listed := at, false
	for j, p := range op.Packages {
		if p.Name != pkg {
			continue
		}
		field = fmt.Sprintf("%s.packages[%d]", at, j)
		for k, c := range p.Channels {
			if c.Name == ch {
				field, listed = fmt.Sprintf("%s.channels[%d]", field, k), true
			}
		}
	}
	what := "the filtered catalog would not serve"
	switch {
	case pkg != "" && ch != "":
		what = fmt.Sprintf("package %s, channel %s: the filtered catalog would not serve", pkg, ch)
	case pkg != "":
		what = fmt.Sprintf("package %s: the filtered catalog would not serve", pkg)
	}
	remedy := "opm would refuse it (its CatalogSource pod would crash-loop), so nothing was pushed for it: "
	switch {
	case ch != "" && listed:
		remedy += fmt.Sprintf("change this channel entry's minVersion/maxVersion so the range holds the upgrade chain from its head, or select the whole channel (full: true), or leave channel %s out", ch)
	case ch != "":
		remedy += fmt.Sprintf("list package %s with its channels and give channel %s a range that holds the upgrade chain from its head (or full: true), or leave it out", pkg, ch)
	case pkg != "":
		remedy += fmt.Sprintf("give package %s a defaultChannel among the channels kept (%s), or select it whole (full: true)", pkg, strings.Join(channelsOf(dc, pkg), ", "))
	default:
		remedy += "select the packages whole (full: true) or report the catalog"
	}
	return &CatalogError{Catalog: op.Catalog, At: atField(isc, field), Err: fmt.Errorf("%s: %w", what, err), remedy: remedy}
}

// atField is isc.At(field), or field alone without a configuration (tests).
func atField(isc *ImageSetConfig, field string) string {
	if isc == nil {
		return field
	}
	return isc.At(field)
}

// brokenPart finds the package, and within it the channel, that makes dc invalid: each package is
// validated alone, then each of the failing package's channels alone (as its default, with only
// its own bundles). A package none of whose channels fails alone is broken as a whole (a default
// channel left out, a bundle in no channel): ch is then "".
func brokenPart(dc *declcfg.DeclarativeConfig) (pkg, ch string) {
	for _, p := range dc.Packages {
		if _, err := declcfg.ConvertToModel(*subset(dc, p.Name, "")); err == nil {
			continue
		}
		for _, c := range channelsOf(dc, p.Name) {
			if _, err := declcfg.ConvertToModel(*subset(dc, p.Name, c)); err != nil {
				return p.Name, c
			}
		}
		return p.Name, ""
	}
	return "", ""
}

// subset is the part of dc that is package pkg (only channel ch, as its default, when ch is set).
func subset(dc *declcfg.DeclarativeConfig, pkg, ch string) *declcfg.DeclarativeConfig {
	out := &declcfg.DeclarativeConfig{}
	for _, p := range dc.Packages {
		if p.Name == pkg {
			if ch != "" {
				p.DefaultChannel = ch
			}
			out.Packages = append(out.Packages, p)
		}
	}
	inChannel := map[string]bool{}
	for _, c := range dc.Channels {
		if c.Package == pkg && (ch == "" || c.Name == ch) {
			out.Channels = append(out.Channels, c)
			for _, e := range c.Entries {
				inChannel[e.Name] = true
			}
		}
	}
	for _, b := range dc.Bundles {
		if b.Package == pkg && (ch == "" || inChannel[b.Name]) {
			out.Bundles = append(out.Bundles, b)
		}
	}
	if ch == "" {
		for _, d := range dc.Deprecations {
			if d.Package == pkg {
				out.Deprecations = append(out.Deprecations, d)
			}
		}
	}
	return out
}

// channelsOf lists the channels dc has for pkg, sorted.
func channelsOf(dc *declcfg.DeclarativeConfig, pkg string) []string {
	var out []string
	for _, c := range dc.Channels {
		if c.Package == pkg {
			out = append(out, c.Name)
		}
	}
	sort.Strings(out)
	return out
}

// configsNotFound explains a catalog image whose index label names a folder with no package:
// where the label pointed, how many catalog files were read there, and the folders elsewhere in
// the image that hold files named like a package's catalog file (where the catalog may really be).
func configsNotFound(dir string, files int, elsewhere map[string]bool) error {
	msg := fmt.Sprintf("no packages under %s: the image's %s label points there, and the %d catalog files read there hold no olm.package",
		dir, ConfigsLabel, files)
	if files == 0 {
		msg = fmt.Sprintf("no packages under %s: the image's %s label points there, and the image has no .json or .yaml file in it", dir, ConfigsLabel)
	}
	var others []string
	for d := range elsewhere {
		others = append(others, d)
	}
	sort.Strings(others)
	if len(others) > 5 {
		others = append(others[:5], "...")
	}
	if len(others) > 0 {
		msg += "; files named like a package's catalog.json or index.yaml are under " + strings.Join(others, ", ")
	}
	return fmt.Errorf("%s: rebuild the catalog image with the label naming its catalog folder (opm generate dockerfile sets it), or mirror the image as an additionalImage", msg)
}

// catalogRoot is the folder a file named like a package's catalog file (catalog.json,
// index.yaml, ...) would make the catalog root: the parent of its package folder. ok is false for
// other files.
func catalogRoot(name string) (string, bool) {
	switch path.Base(name) {
	case "catalog.json", "catalog.yaml", "catalog.yml", "index.json", "index.yaml", "index.yml":
		return path.Dir(path.Dir(path.Clean("/" + name))), true
	}
	return "", false
}
