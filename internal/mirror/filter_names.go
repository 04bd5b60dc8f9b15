package mirror

import (
	"fmt"
	"sort"
	"strings"

	"github.com/operator-framework/operator-registry/alpha/declcfg"

	"github.com/bootstrap-dev/bootstrap/internal/suggest"
)

// Names in a catalog: checking the ISC's packages and channels against it, and what to suggest.

// checkNames refuses a package or channel the catalog does not have, naming the closest ones.
func checkNames(dc *declcfg.DeclarativeConfig, op ISCOperator, where func(string) string, at string) error {
	if len(op.Packages) == 0 {
		return nil
	}
	pkgs := map[string]bool{}
	for _, p := range dc.Packages {
		pkgs[p.Name] = true
	}
	chans := map[string]map[string]bool{}
	for _, ch := range dc.Channels {
		if chans[ch.Package] == nil {
			chans[ch.Package] = map[string]bool{}
		}
		chans[ch.Package][ch.Name] = true
	}
	for j, p := range op.Packages {
		pat := fmt.Sprintf("%s.packages[%d]", at, j)
		if !pkgs[p.Name] {
			return &CatalogError{Catalog: op.Catalog, At: where(pat + ".name"), Err: fmt.Errorf("no package %q", p.Name),
				remedy: "closest names: " + strings.Join(closest(p.Name, sortedKeys(pkgs), 3), ", ")}
		}
		for k, ch := range p.Channels {
			if !chans[p.Name][ch.Name] {
				return &CatalogError{Catalog: op.Catalog, At: where(fmt.Sprintf("%s.channels[%d].name", pat, k)),
					Err:    fmt.Errorf("package %s has no channel %q", p.Name, ch.Name),
					remedy: "its channels: " + strings.Join(closest(ch.Name, sortedKeys(chans[p.Name]), 0), ", ")}
			}
		}
	}
	return nil
}

// closest returns up to n names (all when n is 0) ordered by edit distance to s, then by name.
func closest(s string, names []string, n int) []string {
	type scored struct {
		name string
		d    int
	}
	ss := make([]scored, 0, len(names))
	for _, x := range names {
		ss = append(ss, scored{x, suggest.Distance(strings.ToLower(s), strings.ToLower(x))})
	}
	sort.SliceStable(ss, func(i, j int) bool { return ss[i].d < ss[j].d })
	if n > 0 && len(ss) > n {
		ss = ss[:n]
	}
	out := make([]string, len(ss))
	for i, x := range ss {
		out[i] = x.name
	}
	return out
}

func channelNames(dc *declcfg.DeclarativeConfig, pkg string) []string {
	var out []string
	for _, ch := range dc.Channels {
		if ch.Package == pkg {
			out = append(out, ch.Name)
		}
	}
	sort.Strings(out)
	return out
}

// versionSpan is "LOW .. HIGH" of a package's bundle versions.
func versionSpan(dc *declcfg.DeclarativeConfig, pkg string) string {
	var vs []string
	for _, b := range dc.Bundles {
		if b.Package == pkg {
			if v := bundleVersion(b); v != "" {
				vs = append(vs, v)
			}
		}
	}
	if len(vs) == 0 {
		return "none"
	}
	sort.Slice(vs, func(i, j int) bool { return compareVersions(vs[i], vs[j]) < 0 })
	return vs[0] + " .. " + vs[len(vs)-1]
}
