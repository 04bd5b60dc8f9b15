package upgrade

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/blang/semver/v4"
	"github.com/operator-framework/operator-registry/alpha/declcfg"
)

// catalogs loads the carried file-based catalogs (operator-registry's declcfg, the model the
// mirror's catalog code uses), once each.
type catalogs struct {
	c     *Carried
	cache map[string]*declcfg.DeclarativeConfig
	errs  map[string]error
}

// rel is a catalog's directory for a minor and CatalogSource name. A CatalogSource a mirror named
// for one minor (cs-<index>-v4-18) stands, in another minor, for the same index's catalog the
// mirror carried under that minor's name (cs-<index>-v4-19) when none is under the first.
func (cs *catalogs) rel(minor, source string) string {
	rel := filepath.ToSlash(filepath.Join(CatalogsDir, minor, source))
	if m := mirroredCatalog.FindStringSubmatch(source); m != nil && !isDir(filepath.Join(cs.c.Dir, filepath.FromSlash(rel))) {
		alt := filepath.ToSlash(filepath.Join(CatalogsDir, minor, "cs-"+m[1]+"-v"+strings.ReplaceAll(minor, ".", "-")))
		if isDir(filepath.Join(cs.c.Dir, filepath.FromSlash(alt))) {
			return alt
		}
	}
	return rel
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// get loads catalogs/<minor>/<source>; nil (and no error) when it was not carried.
func (cs *catalogs) get(minor, source string) (*declcfg.DeclarativeConfig, error) {
	rel := cs.rel(minor, source)
	if dc, ok := cs.cache[rel]; ok {
		return dc, cs.errs[rel]
	}
	dir := filepath.Join(cs.c.Dir, filepath.FromSlash(rel))
	var dc *declcfg.DeclarativeConfig
	var err error
	if fi, serr := os.Stat(dir); serr == nil && fi.IsDir() {
		dc, err = declcfg.LoadFS(context.Background(), os.DirFS(dir))
	}
	cs.cache[rel], cs.errs[rel] = dc, err
	return dc, err
}

// bundleInfo is what the gate needs of a bundle.
type bundleInfo struct {
	Name    string
	Version semver.Version
	Max     string // olm.maxOpenShiftVersion
	Image   string
}

// channelOf is a package's channel in a catalog with its bundles; ok false when the package or
// channel is not there (which one is said by missing).
// defaultChannel is pkg's default channel in dc ("" when the package is not there).
func defaultChannel(dc *declcfg.DeclarativeConfig, pkg string) string {
	for _, p := range dc.Packages {
		if p.Name == pkg {
			return p.DefaultChannel
		}
	}
	return ""
}

func channelOf(dc *declcfg.DeclarativeConfig, pkg, ch string) (entries []declcfg.ChannelEntry, bundles map[string]bundleInfo, missing string) {
	found := false
	for _, p := range dc.Packages {
		if p.Name == pkg {
			found = true
		}
	}
	if !found {
		return nil, nil, "package " + pkg
	}
	found = false
	for _, c := range dc.Channels {
		if c.Package == pkg && c.Name == ch {
			entries, found = c.Entries, true
		}
	}
	if !found {
		return nil, nil, "channel " + ch + " of package " + pkg
	}
	bundles = map[string]bundleInfo{}
	for _, b := range dc.Bundles {
		if b.Package != pkg {
			continue
		}
		bi := bundleInfo{Name: b.Name, Image: b.Image}
		for _, p := range b.Properties {
			switch p.Type {
			case "olm.package":
				var v struct{ Version string }
				if json.Unmarshal(p.Value, &v) == nil {
					bi.Version, _ = semver.ParseTolerant(v.Version)
				}
			case "olm.maxOpenShiftVersion":
				var s string
				if json.Unmarshal(p.Value, &s) != nil {
					s = string(p.Value)
				}
				bi.Max = strings.TrimSpace(s)
			}
		}
		bundles[b.Name] = bi
	}
	return entries, bundles, ""
}

// reachable lists the channel's bundles an installed bundle (name, version) can update to
// through replaces, skips and skipRange, transitively (OLM's rules), newest first; present says
// whether the installed bundle is itself in the channel.
func reachable(entries []declcfg.ChannelEntry, bundles map[string]bundleInfo, name string, ver semver.Version) (out []bundleInfo, present bool) {
	in := map[string]semver.Version{name: ver}
	for _, e := range entries {
		if e.Name == name {
			present = true
		}
	}
	for changed := true; changed; {
		changed = false
		for _, e := range entries {
			if _, ok := in[e.Name]; ok {
				continue
			}
			hit := false
			if _, ok := in[e.Replaces]; ok && e.Replaces != "" {
				hit = true
			}
			for _, s := range e.Skips {
				if _, ok := in[s]; ok {
					hit = true
				}
			}
			if e.SkipRange != "" {
				if r, err := semver.ParseRange(e.SkipRange); err == nil {
					for _, v := range in {
						if r(v) {
							hit = true
						}
					}
				}
			}
			if hit {
				in[e.Name] = bundles[e.Name].Version
				out = append(out, bundles[e.Name])
				changed = true
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Version.EQ(out[j].Version) {
			return out[i].Version.GT(out[j].Version)
		}
		return out[i].Name < out[j].Name
	})
	return out, present
}

// maxBelow reports whether an olm.maxOpenShiftVersion ("4.18", "4.18.0") is below a minor.
func maxBelow(max, minor string) bool {
	if max == "" {
		return false
	}
	m, err := semver.ParseTolerant(max)
	t, err2 := semver.ParseTolerant(minor)
	if err != nil || err2 != nil {
		return false
	}
	return m.Major < t.Major || (m.Major == t.Major && m.Minor < t.Minor)
}
