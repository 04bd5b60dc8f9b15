package site

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/bootstrap-dev/bootstrap/internal/finding"
	"github.com/bootstrap-dev/bootstrap/internal/suggest"
)

// RefusePlaceholders makes Validate refuse what an example profile leaves to be filled in: an
// all-zero digest, a "changeme" value, a registry under example.com (or .org, .net, .example)
// unless the profile is the lab's (metadata.name lab). The CLI validates with it; the example
// profiles hold such placeholders on purpose until edited.
func RefusePlaceholders() Option {
	return func(o *options) { o.refusePlaceholders = true }
}

// zeroDigest is the placeholder digest of the example profiles.
const zeroDigest = "sha256:0000000000000000000000000000000000000000000000000000000000000000"

// placeholders reports every placeholder left in the profile.
func (c *checker) placeholders() {
	if !c.o.refusePlaceholders {
		return
	}
	c.walkStrings(reflect.ValueOf(c.s).Elem(), "", func(path, v string) {
		switch {
		case strings.Contains(v, zeroDigest):
			c.err(path, "an all-zero digest is a placeholder, not an image",
				"pin the real digest (`oc adm release info IMAGE -o jsonpath='{.digest}'` for a release)")
		case strings.Contains(strings.ToLower(v), "changeme"):
			c.err(path, fmt.Sprintf("%q is a placeholder", v), "write the site's real value here")
		}
	})
	if c.s.Metadata.Name == "lab" {
		return
	}
	for _, r := range []struct{ path, host string }{{"registry.host", c.s.Registry.Host}, {"mirror.source.registry", c.s.Mirror.Source.Registry}} {
		if exampleDomain(hostOnly(r.host)) {
			c.err(r.path, fmt.Sprintf("%s is an example domain (RFC 2606), not the site's registry", r.host),
				"write the site's registry host:port (the one the mirror pushes to and the nodes pull from)")
		}
	}
}

// exampleDomain reports a host under a domain reserved for examples.
func exampleDomain(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	for _, d := range []string{"example.com", "example.org", "example.net", "example"} {
		if host == d || strings.HasSuffix(host, "."+d) {
			return true
		}
	}
	return false
}

// walkStrings calls f with the field path of every string value written in the profile.
func (c *checker) walkStrings(v reflect.Value, path string, f func(path, v string)) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			c.walkStrings(v.Elem(), path, f)
		}
	case reflect.String:
		if v.String() != "" {
			f(path, v.String())
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			c.walkStrings(v.Index(i), fmt.Sprintf("%s[%d]", path, i), f)
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			if k.Kind() == reflect.String {
				c.walkStrings(v.MapIndex(k), joinPath(path, k.String()), f)
			}
		}
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			ft := t.Field(i)
			name, _, _ := strings.Cut(ft.Tag.Get("yaml"), ",")
			if !ft.IsExported() || name == "-" || name == "" {
				continue
			}
			c.walkStrings(v.Field(i), joinPath(path, name), f)
		}
	}
}

// didYouMean is " (did you mean \"master\"?)" for a value close to one of valid, else "".
func didYouMean(v string, valid ...string) string {
	best, bestDist := "", max(2, len(v)/3)+1
	for _, s := range valid {
		if d := suggest.Distance(strings.ToLower(v), strings.ToLower(s)); d < bestDist {
			best, bestDist = s, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf("; did you mean %q?", best)
}

// errBecause reports a problem that follows from another (cause, a field path with an error of its
// own): it is shown folded under its cause, which fixing clears it.
func (c *checker) errBecause(cause, path, msg, remedy string) {
	c.probs = append(c.probs, finding.Finding{Position: c.s.At(path), Path: path, Status: finding.Fail, Message: msg,
		Remedy: remedy, CausedBy: cause})
}

// badRole is the path of the first node's role that is neither master nor worker, or "".
func (c *checker) badRole() string {
	for i, n := range c.s.Nodes {
		if n.Role != "" && n.Role != RoleMaster && n.Role != RoleWorker {
			return fmt.Sprintf("nodes[%d].role", i)
		}
	}
	return ""
}

// folded puts each problem whose cause has an error right after that cause (in the order
// found), so a knock-on error is read as the consequence it is; the others keep their order.
func folded(ps finding.List) finding.List {
	causes := map[string]bool{}
	for _, p := range ps {
		if p.Status == finding.Fail && p.CausedBy == "" {
			causes[p.Path] = true
		}
	}
	var out, knock finding.List
	for _, p := range ps {
		if p.CausedBy != "" && causes[p.CausedBy] {
			knock = append(knock, p)
			continue
		}
		out = append(out, p)
	}
	if len(knock) == 0 {
		return ps
	}
	res := make(finding.List, 0, len(ps))
	for _, p := range out {
		res = append(res, p)
		for _, k := range knock {
			if k.CausedBy == p.Path && p.CausedBy == "" && p.Status == finding.Fail {
				res = append(res, k)
			}
		}
	}
	return res
}
