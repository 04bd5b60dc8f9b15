package mirror

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/operator-framework/operator-registry/alpha/declcfg"
	"github.com/operator-framework/operator-registry/alpha/property"

	"github.com/bootstrap-dev/bootstrap/internal/mirror/mirrortest"
)

// Synthetic catalogs with the shapes of real Red Hat catalogs (redhat-operator-index v4.16/v4.17):
// replaces chains, heads that skip every older bundle, bundles that only carry olm.skipRange,
// heads in different channels, a default channel whose head is not the newest bundle, timestamped
// pre-releases, olm.deprecations for package, channel and bundle, packages of hundreds of bundles.

// tEntry is one channel entry of a test package: its version, and what it replaces/skips (by version).
type tEntry struct {
	v, replaces string
	skips       []string
	skipRange   string
}

type tPkg struct {
	name, def string
	channels  map[string][]tEntry
	// deprecated: "package", "channel/NAME", "bundle/VERSION"
	deprecated []string
}

// chain is a replaces chain, oldest first.
func chain(vs ...string) []tEntry {
	out := make([]tEntry, len(vs))
	for i, v := range vs {
		out[i].v = v
		if i > 0 {
			out[i].replaces = vs[i-1]
		}
	}
	return out
}

func bname(pkg, v string) string { return pkg + ".v" + v }

// testFBC builds a declarative config as opm would load it.
func testFBC(pkgs ...tPkg) *declcfg.DeclarativeConfig {
	dc := &declcfg.DeclarativeConfig{}
	for _, p := range pkgs {
		dc.Packages = append(dc.Packages, declcfg.Package{Schema: declcfg.SchemaPackage, Name: p.name, DefaultChannel: p.def})
		versions := map[string]bool{}
		for _, chName := range sortedKeys(p.channels) {
			ch := declcfg.Channel{Schema: declcfg.SchemaChannel, Package: p.name, Name: chName}
			for _, e := range p.channels[chName] {
				versions[e.v] = true
				ce := declcfg.ChannelEntry{Name: bname(p.name, e.v), SkipRange: e.skipRange}
				if e.replaces != "" {
					ce.Replaces = bname(p.name, e.replaces)
				}
				for _, s := range e.skips {
					ce.Skips = append(ce.Skips, bname(p.name, s))
				}
				ch.Entries = append(ch.Entries, ce)
			}
			dc.Channels = append(dc.Channels, ch)
		}
		for _, v := range sortedKeys(versions) {
			img := "registry.example.com/ops/" + p.name + "-bundle@sha256:" + fmt.Sprintf("%064x", len(dc.Bundles)+1)
			dc.Bundles = append(dc.Bundles, declcfg.Bundle{Schema: declcfg.SchemaBundle, Package: p.name, Name: bname(p.name, v), Image: img,
				Properties:    []property.Property{property.MustBuildPackage(p.name, v)},
				RelatedImages: []declcfg.RelatedImage{{Name: "operator", Image: "registry.example.com/ops/" + p.name + ":v" + v}, {Image: img}}})
		}
		if len(p.deprecated) > 0 {
			d := declcfg.Deprecation{Schema: declcfg.SchemaDeprecation, Package: p.name}
			for _, x := range p.deprecated {
				kind, name, _ := strings.Cut(x, "/")
				e := declcfg.DeprecationEntry{Message: x + " is deprecated"}
				switch kind {
				case "package":
					e.Reference = declcfg.PackageScopedReference{Schema: declcfg.SchemaPackage}
				case "channel":
					e.Reference = declcfg.PackageScopedReference{Schema: declcfg.SchemaChannel, Name: name}
				case "bundle":
					e.Reference = declcfg.PackageScopedReference{Schema: declcfg.SchemaBundle, Name: bname(p.name, name)}
				}
				d.Entries = append(d.Entries, e)
			}
			dc.Deprecations = append(dc.Deprecations, d)
		}
	}
	return dc
}

// summary renders a filtered catalog as "pkg(default=ch) ch: v v v" lines, versions sorted.
func summary(dc *declcfg.DeclarativeConfig) string {
	var lines []string
	for _, p := range dc.Packages {
		lines = append(lines, p.Name+" default="+p.DefaultChannel)
	}
	for _, ch := range dc.Channels {
		var vs []string
		for _, e := range ch.Entries {
			vs = append(vs, strings.TrimPrefix(e.Name, ch.Package+".v"))
		}
		sort.Slice(vs, func(i, j int) bool { return compareVersions(vs[i], vs[j]) < 0 })
		lines = append(lines, ch.Package+"/"+ch.Name+": "+strings.Join(vs, " "))
	}
	var bs []string
	for _, b := range dc.Bundles {
		bs = append(bs, strings.TrimPrefix(b.Name, b.Package+".v"))
	}
	sort.Slice(bs, func(i, j int) bool { return compareVersions(bs[i], bs[j]) < 0 })
	lines = append(lines, "bundles: "+strings.Join(bs, " "))
	for _, d := range dc.Deprecations {
		for _, e := range d.Entries {
			lines = append(lines, "deprecated "+d.Package+" "+e.Reference.Schema+" "+e.Reference.Name)
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// kdesched is shaped like the kube-descheduler operator of redhat-operator-index v4.16: a
// stable channel whose newest bundle skips all the others and carries a skipRange, timestamped
// 4.14 pre-releases in a channel of their own, and a default channel whose head is not the newest
// bundle of the package.
func kdesched() tPkg {
	return tPkg{name: "kube-descheduler-operator", def: "stable", channels: map[string][]tEntry{
		"stable": {
			{v: "5.0.0"}, {v: "5.0.1", replaces: "5.0.0"}, {v: "5.0.2", replaces: "5.0.1"},
			{v: "5.1.0", skips: []string{"5.0.0", "5.0.1", "5.0.2"}, skipRange: ">=5.0.0 <5.1.0"},
		},
		"4.14":         chain("4.14.0-202405000000", "4.14.0-202406000000", "4.14.1"),
		"tech-preview": {{v: "5.2.0-0.1", skipRange: ">=5.0.0 <5.2.0-0.1"}},
	}}
}

// gitops is shaped like openshift-gitops-operator: heads in different channels (latest, gitops-1.12,
// gitops-1.13), a package-level deprecation, a deprecated channel and a deprecated bundle.
func gitops() tPkg {
	return tPkg{name: "openshift-gitops-operator", def: "latest", channels: map[string][]tEntry{
		"latest":      chain("1.12.0", "1.12.1", "1.13.0", "1.13.1"),
		"gitops-1.12": chain("1.12.0", "1.12.1", "1.12.2"),
		"gitops-1.13": chain("1.13.0", "1.13.1"),
	}, deprecated: []string{"channel/gitops-1.12", "bundle/1.12.0", "bundle/1.12.1"}}
}

// many is a package of n bundles on one chain in channel "stable", with every tenth bundle also in "fast".
func many(name string, n int) tPkg {
	var vs, fast []string
	for i := 0; i < n; i++ {
		v := fmt.Sprintf("1.%d.%d", i/10, i%10)
		vs = append(vs, v)
		if i%10 == 0 {
			fast = append(fast, v)
		}
	}
	return tPkg{name: name, def: "stable", channels: map[string][]tEntry{"stable": chain(vs...), "fast": chain(fast...)}}
}

// TestFilterRules pins every selection rule of oc-mirror v2 (4.18+) as this tool applies it
// through the catalog filter library; each output also passes operator-registry's model
// validation (inside FilterCatalog) and, with OPM set, the real `opm validate` and `opm serve`.
func TestFilterRules(t *testing.T) {
	base := func() *declcfg.DeclarativeConfig { return testFBC(kdesched(), gitops()) }
	kd, gi := "kube-descheduler-operator", "openshift-gitops-operator"
	tests := []struct {
		name  string
		dc    func() *declcfg.DeclarativeConfig
		op    ISCOperator
		want  string   // summary; "" to check only count
		warns []string // substrings of the warnings
	}{
		{"no packages: the head of every channel of every package", base, ISCOperator{},
			kd + " default=stable\n" + kd + "/4.14: 4.14.1\n" + kd + "/stable: 5.1.0\n" + kd + "/tech-preview: 5.2.0-0.1\n" +
				"bundles: 1.12.2 1.13.1 4.14.1 5.1.0 5.2.0-0.1\n" +
				gi + " default=latest\n" + gi + "/gitops-1.12: 1.12.2\n" + gi + "/gitops-1.13: 1.13.1\n" + gi + "/latest: 1.13.1\n" +
				"deprecated " + gi + " olm.channel gitops-1.12", nil},
		{"package alone: the head of each of its channels, not only the default's", base,
			ISCOperator{Packages: []ISCPackage{{Name: gi}}},
			gi + " default=latest\n" + gi + "/gitops-1.12: 1.12.2\n" + gi + "/gitops-1.13: 1.13.1\n" + gi + "/latest: 1.13.1\n" +
				"bundles: 1.12.2 1.13.1\ndeprecated " + gi + " olm.channel gitops-1.12", nil},
		{"package minVersion applies to every channel", base,
			ISCOperator{Packages: []ISCPackage{{Name: gi, MinVersion: "1.12.1"}}},
			gi + " default=latest\n" + gi + "/gitops-1.12: 1.12.1 1.12.2\n" + gi + "/gitops-1.13: 1.13.0 1.13.1\n" + gi + "/latest: 1.12.1 1.13.0 1.13.1\n" +
				"bundles: 1.12.1 1.12.2 1.13.0 1.13.1\n" +
				"deprecated " + gi + " olm.bundle " + bname(gi, "1.12.1") + "\ndeprecated " + gi + " olm.channel gitops-1.12", nil},
		{"a range that empties a channel other than the default drops that channel", base,
			ISCOperator{Packages: []ISCPackage{{Name: gi, MinVersion: "1.13.0"}}},
			gi + " default=latest\n" + gi + "/gitops-1.13: 1.13.0 1.13.1\n" + gi + "/latest: 1.13.0 1.13.1\nbundles: 1.13.0 1.13.1", nil},
		{"maxVersion below the head: the highest bundle in range becomes the single head", base,
			ISCOperator{Packages: []ISCPackage{{Name: gi, Channels: []ISCPackageChannel{{Name: "latest", MaxVersion: "1.12.1"}}}}},
			gi + " default=latest\n" + gi + "/latest: 1.12.0 1.12.1\nbundles: 1.12.0 1.12.1\n" +
				"deprecated " + gi + " olm.bundle " + bname(gi, "1.12.0") + "\ndeprecated " + gi + " olm.bundle " + bname(gi, "1.12.1"), nil},
		{"a range on bundles a head skips keeps that head, with a warning naming it", base,
			ISCOperator{Packages: []ISCPackage{{Name: kd, Channels: []ISCPackageChannel{{Name: "stable", MinVersion: "5.0.1", MaxVersion: "5.0.2"}}}}},
			kd + " default=stable\n" + kd + "/stable: 5.0.1 5.0.2 5.1.0\nbundles: 5.0.1 5.0.2 5.1.0",
			[]string{`including bundle "` + bname(kd, "5.1.0") + `" with version "5.1.0": it falls outside the specified range`}},
		{"pre-releases are outside a range of releases", base,
			ISCOperator{Packages: []ISCPackage{{Name: kd, Channels: []ISCPackageChannel{{Name: "4.14", MinVersion: "4.14.0"}}, DefaultChannel: "4.14"}}},
			kd + " default=4.14\n" + kd + "/4.14: 4.14.1\nbundles: 4.14.1", nil},
		{"a pre-release bound includes pre-releases", base,
			ISCOperator{Packages: []ISCPackage{{Name: kd, Channels: []ISCPackageChannel{{Name: "4.14", MinVersion: "4.14.0-202406000000"}}, DefaultChannel: "4.14"}}},
			kd + " default=4.14\n" + kd + "/4.14: 4.14.0-202406000000 4.14.1\nbundles: 4.14.0-202406000000 4.14.1", nil},
		{"min equal to max: exactly that bundle", base,
			ISCOperator{Packages: []ISCPackage{{Name: gi, Channels: []ISCPackageChannel{{Name: "latest", MinVersion: "1.13.0", MaxVersion: "1.13.0"}}}}},
			gi + " default=latest\n" + gi + "/latest: 1.13.0\nbundles: 1.13.0", nil},
		{"listed channel: its head; the default moves only when configured", base,
			ISCOperator{Packages: []ISCPackage{{Name: gi, DefaultChannel: "gitops-1.13", Channels: []ISCPackageChannel{{Name: "gitops-1.13"}}}}},
			gi + " default=gitops-1.13\n" + gi + "/gitops-1.13: 1.13.1\nbundles: 1.13.1", nil},
		{"defaultChannel overrides the package's own", base,
			ISCOperator{Packages: []ISCPackage{{Name: gi, DefaultChannel: "gitops-1.13"}}},
			gi + " default=gitops-1.13\n" + gi + "/gitops-1.12: 1.12.2\n" + gi + "/gitops-1.13: 1.13.1\n" + gi + "/latest: 1.13.1\n" +
				"bundles: 1.12.2 1.13.1\ndeprecated " + gi + " olm.channel gitops-1.12", nil},
		{"full with packages: every bundle of the kept channels", base,
			ISCOperator{Full: true, Packages: []ISCPackage{{Name: gi, Channels: []ISCPackageChannel{{Name: "latest"}}}}},
			gi + " default=latest\n" + gi + "/latest: 1.12.0 1.12.1 1.13.0 1.13.1\nbundles: 1.12.0 1.12.1 1.13.0 1.13.1\n" +
				"deprecated " + gi + " olm.bundle " + bname(gi, "1.12.0") + "\ndeprecated " + gi + " olm.bundle " + bname(gi, "1.12.1"), nil},
		{"full without packages: the catalog as it is", base, ISCOperator{Full: true}, "", nil},
		{"package deprecation is kept", func() *declcfg.DeclarativeConfig {
			p := gitops()
			p.deprecated = []string{"package"}
			return testFBC(p)
		}, ISCOperator{Packages: []ISCPackage{{Name: gi, Channels: []ISCPackageChannel{{Name: "latest"}}}}},
			gi + " default=latest\n" + gi + "/latest: 1.13.1\nbundles: 1.13.1\ndeprecated " + gi + " olm.package ", nil},
		{"hundreds of bundles: heads only", func() *declcfg.DeclarativeConfig {
			return testFBC(many("a-op", 300), many("b-op", 300), many("c-op", 300))
		}, ISCOperator{Packages: []ISCPackage{{Name: "b-op"}}},
			"b-op default=stable\nb-op/fast: 1.29.0\nb-op/stable: 1.29.9\nbundles: 1.29.0 1.29.9", nil},
		{"hundreds of bundles: a range in the middle of the chain", func() *declcfg.DeclarativeConfig {
			return testFBC(many("a-op", 300), many("b-op", 300))
		}, ISCOperator{Packages: []ISCPackage{{Name: "a-op", Channels: []ISCPackageChannel{{Name: "stable", MinVersion: "1.10.5", MaxVersion: "1.11.2"}}}}},
			"a-op default=stable\na-op/stable: 1.10.5 1.10.6 1.10.7 1.10.8 1.10.9 1.11.0 1.11.1 1.11.2\nbundles: 1.10.5 1.10.6 1.10.7 1.10.8 1.10.9 1.11.0 1.11.1 1.11.2", nil},
	}
	opm := mirrortest.OPM()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dc := tt.dc()
			before := summary(dc)
			tt.op.Catalog = "registry.example.com/redhat/redhat-operator-index:v4.16"
			f, err := FilterCatalog(context.Background(), dc, tt.op, nil, "mirror.operators[0]")
			if err != nil {
				t.Fatal(err)
			}
			if summary(dc) != before {
				t.Error("the input catalog was changed")
			}
			got := summary(f.DC)
			if tt.want == "" {
				if got != before {
					t.Errorf("full catalog changed:\n%s", got)
				}
			} else if want := sortLines(tt.want); got != want {
				t.Errorf("got:\n%s\nwant:\n%s", got, want)
			}
			if len(tt.warns) != len(f.Warnings) {
				t.Errorf("warnings %q, want %d", f.Warnings, len(tt.warns))
			}
			for i, w := range tt.warns {
				if i < len(f.Warnings) && !strings.Contains(f.Warnings[i], w) {
					t.Errorf("warning %q, want it to contain %q", f.Warnings[i], w)
				}
			}
			if opm != "" {
				files, err := WriteFBC(f.DC)
				if err != nil {
					t.Fatal(err)
				}
				opmServes(t, opm, files)
			}
		})
	}
}

// TestFilterErrors pins where oc-mirror stops, and the errors for names a catalog does not have:
// the catalog named once, the ISC line, the remedy.
func TestFilterErrors(t *testing.T) {
	isc := writeISC(t, `apiVersion: mirror.openshift.io/v2alpha1
kind: ImageSetConfiguration
mirror:
  operators:
  - catalog: registry.example.com/redhat/redhat-operator-index:v4.16
    packages:
    - name: openshift-gitops-operator
`)
	gi := "openshift-gitops-operator"
	tests := []struct {
		name string
		op   ISCOperator
		want []string
	}{
		{"default channel filtered out", ISCOperator{Packages: []ISCPackage{{Name: gi, Channels: []ISCPackageChannel{{Name: "gitops-1.13"}}}}},
			[]string{"isc.yaml:7: mirror.operators[0].packages[0]: catalog registry.example.com/redhat/redhat-operator-index:v4.16: package openshift-gitops-operator:",
				`the default channel "latest" was filtered out, a new default channel must be configured for this package`,
				"set defaultChannel on this package to a channel it keeps (gitops-1.13)"}},
		{"defaultChannel names a channel not kept", ISCOperator{Packages: []ISCPackage{{Name: gi, DefaultChannel: "gitops-1.12", Channels: []ISCPackageChannel{{Name: "latest"}}}}},
			[]string{`specified default channel override "gitops-1.12" does not exist in the filtered output`, "(latest)"}},
		{"a range that empties the default channel", ISCOperator{Packages: []ISCPackage{{Name: gi, MinVersion: "9.0.0"}}},
			[]string{`channel "latest" has version range ">=9.0.0" that results in an empty channel`, "the package's versions: 1.12.0 .. 1.13.1"}},
		{"misspelled package", ISCOperator{Packages: []ISCPackage{{Name: "openshift-gitops-operater"}}},
			[]string{`isc.yaml:7: mirror.operators[0].packages[0].name: catalog registry.example.com/redhat/redhat-operator-index:v4.16: no package "openshift-gitops-operater": closest names: openshift-gitops-operator, kube-descheduler-operator`}},
		{"misspelled channel", ISCOperator{Packages: []ISCPackage{{Name: gi, Channels: []ISCPackageChannel{{Name: "gitops-1.31"}}}}},
			[]string{`package openshift-gitops-operator has no channel "gitops-1.31": its channels: gitops-1.12, gitops-1.13, latest`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.op.Catalog = "registry.example.com/redhat/redhat-operator-index:v4.16"
			_, err := FilterCatalog(context.Background(), testFBC(kdesched(), gitops()), tt.op, isc, "mirror.operators[0]")
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\nwant it to contain %q", err, w)
				}
			}
			if n := strings.Count(err.Error(), "catalog registry.example.com"); n != 1 {
				t.Errorf("the catalog is named %d times: %s", n, err)
			}
		})
	}
}

// TestValidateRefusesUnservable proves the in-process validation is operator-registry's: a
// catalog whose channel has two heads, or whose default channel is missing, is refused, and the
// refusal names the ISC line of the entry that selected it, the package and channel, and the fix.
func TestValidateRefusesUnservable(t *testing.T) {
	isc := writeISC(t, `apiVersion: mirror.openshift.io/v2alpha1
kind: ImageSetConfiguration
mirror:
  operators:
  - catalog: registry.example.com/idx:v1
    packages:
    - name: ok-op
    - name: x-op
      channels:
      - name: fast
      - name: stable
`)
	op := isc.Mirror.Operators[0]
	two := testFBC(gitopsNamed("ok-op"), tPkg{name: "x-op", def: "stable", channels: map[string][]tEntry{
		"stable": {{v: "1.0.0"}, {v: "1.1.0"}}, "fast": chain("1.1.0")}})
	err := validateCatalog(op, isc, "mirror.operators[0]", two)
	for _, want := range []string{"isc.yaml:11: mirror.operators[0].packages[1].channels[1]", "package x-op, channel stable",
		"multiple channel heads", "minVersion/maxVersion", "full: true", "nothing was pushed"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("two heads: %v\nwant it to say %q", err, want)
		}
	}
	// a package selected without channels: its line, and how to list the channel
	err = validateCatalog(ISCOperator{Catalog: op.Catalog, Packages: []ISCPackage{{Name: "x-op"}}}, isc, "mirror.operators[0]", two)
	if err == nil || !strings.Contains(err.Error(), "isc.yaml:7: mirror.operators[0].packages[0]: ") ||
		!strings.Contains(err.Error(), "list package x-op with its channels") {
		t.Errorf("two heads, package listed without channels: %v", err)
	}
	nodef := testFBC(tPkg{name: "x-op", def: "gone", channels: map[string][]tEntry{"stable": chain("1.0.0")}})
	err = validateCatalog(op, isc, "mirror.operators[0]", nodef)
	for _, want := range []string{"isc.yaml:8: mirror.operators[0].packages[1]: ", "package x-op:", `invalid channel "gone"`, "defaultChannel among the channels kept (stable)"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("missing default channel: %v\nwant it to say %q", err, want)
		}
	}
	ok := testFBC(gitops())
	if err := validateCatalog(op, isc, "mirror.operators[0]", ok); err != nil {
		t.Errorf("a valid catalog refused: %v", err)
	}
}

// gitopsNamed is gitops() under another package name.
func gitopsNamed(name string) tPkg {
	p := gitops()
	p.name = name
	return p
}

func writeISC(t *testing.T, doc string) *ImageSetConfig {
	t.Helper()
	p := filepath.Join(t.TempDir(), "isc.yaml")
	if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := LoadISC(p)
	if err != nil {
		t.Fatal(err)
	}
	c.File = "isc.yaml"
	return c
}

// opmServes writes a catalog's files and proves them with the real opm.
func opmServes(t *testing.T, opm string, files map[string][]byte) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "configs")
	if err := mirrortest.WriteFiles(dir, files); err != nil {
		t.Fatal(err)
	}
	mirrortest.Serves(t, opm, dir)
}

func sortLines(s string) string {
	l := strings.Split(s, "\n")
	sort.Strings(l)
	return strings.Join(l, "\n")
}
