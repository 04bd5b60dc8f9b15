package mirror

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadISC(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want []string // substrings of the error; nil: valid
	}{
		{"valid", `apiVersion: mirror.openshift.io/v2alpha1
kind: ImageSetConfiguration
mirror:
  platform:
    channels:
    - name: stable-4.16
      minVersion: 4.16.3
      maxVersion: 4.16.3
    architectures: [amd64]
  operators:
  - catalog: registry.redhat.io/redhat/redhat-operator-index:v4.16
    packages:
    - name: openshift-gitops-operator
      channels:
      - name: latest
  additionalImages:
  - name: registry.redhat.io/ubi9/ubi:latest
  blockedImages:
  - name: docker.io/library/alpine
`, nil},
		{"unknown fields by line", `apiVersion: mirror.openshift.io/v2alpha1
kind: ImageSetConfiguration
mirror:
  helm: {}
  operators:
  - catalog: x/y:z
    packages:
    - name: a
      bundles: []
`, []string{`:4:3: error: mirror.helm: field "helm" is not supported (fix: remove it; valid here: additionalImages, blockedImages, operators, platform)`, `:9:7: error: mirror.operators[0].packages[0].bundles: field "bundles" is not supported`}},
		{"every semantic problem at once", `apiVersion: mirror.openshift.io/v1alpha2
kind: ImageSetConfiguration
archiveSize: -4
mirror:
  platform:
    graph: true
    channels:
    - name: stable-4.16
      minVersion: 4.16.0
      maxVersion: 4.15.9
      shortestPath: true
    - name: latest
  operators:
  - packages:
    - name: a
      minVersion: 1.0.0
      channels: [{name: stable, maxVersion: 2.0.0}]
`, []string{"apiVersion", "archiveSize", "channels[0].shortestPath: not supported", "channels[0].maxVersion: 4.15.9 is not a 4.16 release", "channels[1].name: \"latest\" is not a release channel", "operators[0].catalog: required",
			":15:7: error: mirror.operators[0].packages[0]: operator \"a\": mixing both filtering by minVersion/maxVersion and filtering by channel minVersion/maxVersion is not allowed"}},
		// oc-mirror v2's refusals (internal/pkg/config/validate.go and the catalog filter), by line
		{"operators as oc-mirror refuses them", `apiVersion: mirror.openshift.io/v2alpha1
kind: ImageSetConfiguration
mirror:
  operators:
  - catalog: registry.redhat.io/redhat/redhat-operator-index:v4.16
    full: true
    targetCatalog: My/Catalog:v1
    targetTag: -bad
    packages:
    - name: a
      maxVersion: 1.2
    - name: b
      minVersion: not-a-version
    - name: a
      channels:
      - name: stable
      - name: stable
  - catalog: registry.redhat.io/redhat/redhat-operator-index:v4.16
  - catalog: registry.redhat.io/redhat/redhat-operator-index:v4.16
  - catalog: quay.io/partner/redhat-operator-index:v4.16
`, []string{
			`isc.yaml:7:20: error: mirror.operators[0].targetCatalog: invalid target path component "My/Catalog:v1"`,
			`isc.yaml:8:16: error: mirror.operators[0].targetTag: "-bad" is not a valid tag`,
			`isc.yaml:10:7: error: mirror.operators[0].packages[0]: operator "a": full: true cannot be mixed with minVersion/maxVersion`,
			`isc.yaml:13:19: error: mirror.operators[0].packages[1].minVersion: minVersion "not-a-version" must respect semantic versioning notation`,
			`isc.yaml:14:7: error: mirror.operators[0].packages[2]: catalog "registry.redhat.io/redhat/redhat-operator-index:v4.16": duplicate package entry "a" (also mirror.operators[0].packages[0])`,
			`isc.yaml:17:9: error: mirror.operators[0].packages[2].channels[1]: operator "a": duplicate channel entry "stable"`,
			`isc.yaml:19:5: error: mirror.operators[2]: catalog "registry.redhat.io/redhat/redhat-operator-index:v4.16": duplicate found in configuration (also mirror.operators[1])`,
			`isc.yaml:20:5: error: mirror.operators[3]: catalog "quay.io/partner/redhat-operator-index:v4.16": its CatalogSource would be cs-redhat-operator-index-v4-16, like the one of mirror.operators[1]: give one of them a targetCatalog or targetTag`}},
		{"a second YAML document", `apiVersion: mirror.openshift.io/v2alpha1
kind: ImageSetConfiguration
mirror:
  additionalImages:
  - name: registry.redhat.io/ubi9/ubi:latest
---
apiVersion: mirror.openshift.io/v2alpha1
kind: ImageSetConfiguration
`, []string{"isc.yaml:7: a second YAML document; an ImageSetConfiguration file holds one document"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "isc.yaml")
			if err := os.WriteFile(p, []byte(tt.doc), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := LoadISC(p)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("valid ISC rejected: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("invalid ISC accepted")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}

// TestLoadISCEveryProblemWithItsLine: one configuration with several kinds of problem reports
// every one of them at once, each with line, column, field path and a remedy where one exists.
func TestLoadISCEveryProblemWithItsLine(t *testing.T) {
	doc := `apiVersion: mirror.openshift.io/v2alpha1
kind: ImageSetConfiguration
archiveSize: four
mirror:
  platform:
    architectures: [amd64, sparc]
    graph: false
    graph: true
  operators:
  - catalog: registry.redhat.io/redhat/redhat-operator-index:v4.16
    packages:
    - defaultChannel: stable
    - name: b
      bundels: []
  additionalImages:
  - name: [a, b]
`
	p := filepath.Join(t.TempDir(), "isc.yaml")
	if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadISC(p)
	ps, ok := AsISCProblems(err)
	if !ok {
		t.Fatalf("want an *ISCError, got %v", err)
	}
	want := []struct {
		line, col  int
		path, text string
		remedy     bool
	}{
		{3, 14, "archiveSize", "expected a whole number, found a string", true},                                        // bad type
		{6, 28, "mirror.platform.architectures[1]", `"sparc" is not one of amd64, arm64, ppc64le, s390x, multi`, true}, // bad value
		{8, 5, "mirror.platform.graph", `field "graph" is written twice in this mapping`, true},                        // duplicate key
		{12, 7, "mirror.operators[0].packages[0].name", "required", true},                                              // missing required field
		{14, 7, "mirror.operators[0].packages[1].bundels", `field "bundels" is not supported`, true},                   // unknown field
		{16, 11, "mirror.additionalImages[0].name", "expected a string, found a list", true},                           // bad type
	}
	if len(ps) != len(want) {
		t.Errorf("%d problems, want %d:\n%v", len(ps), len(want), ps)
	}
	for i, w := range want {
		if i >= len(ps) {
			break
		}
		g := ps[i]
		if g.File != p || g.Line != w.line || g.Column != w.col || g.Path != w.path || g.Message != w.text || (g.Remedy != "") != w.remedy {
			t.Errorf("problem %d: %s\nwant %s:%d:%d: %s: %s (remedy: %v)", i, g, p, w.line, w.col, w.path, w.text, w.remedy)
		}
		if !strings.Contains(err.Error(), g.String()) {
			t.Errorf("the error does not list %s", g)
		}
	}
	if !strings.Contains(ps[len(ps)-2].Remedy, "valid here: channels, defaultChannel") {
		t.Errorf("unknown field remedy lists no valid field: %q", ps[len(ps)-2].Remedy)
	}
}
