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
`, []string{`:4: field "helm"`, `:9: field "bundles"`}},
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
`, []string{"apiVersion", "archiveSize", "platform.graph", "channels[0].shortestPath: not supported", "channels[0].maxVersion: 4.15.9 is not a 4.16 release", "channels[1].name: \"latest\" is not a release channel", "operators[0].catalog: required",
			":15: mirror.operators[0].packages[0]: operator \"a\": mixing both filtering by minVersion/maxVersion and filtering by channel minVersion/maxVersion is not allowed"}},
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
  - catalog: registry.redhat.io/redhat/redhat-operator-index:v4.17
`, []string{
			`isc.yaml:7: mirror.operators[0].targetCatalog: invalid target path component "My/Catalog:v1"`,
			`isc.yaml:8: mirror.operators[0].targetTag: "-bad" is not a valid tag`,
			`isc.yaml:10: mirror.operators[0].packages[0]: operator "a": full: true cannot be mixed with minVersion/maxVersion`,
			`isc.yaml:13: mirror.operators[0].packages[1].minVersion: minVersion "not-a-version" must respect semantic versioning notation`,
			`isc.yaml:14: mirror.operators[0].packages[2]: catalog "registry.redhat.io/redhat/redhat-operator-index:v4.16": duplicate package entry "a" (also mirror.operators[0].packages[0])`,
			`isc.yaml:17: mirror.operators[0].packages[2].channels[1]: operator "a": duplicate channel entry "stable"`,
			`isc.yaml:19: mirror.operators[2]: catalog "registry.redhat.io/redhat/redhat-operator-index:v4.16": duplicate found in configuration (also mirror.operators[1])`,
			`isc.yaml:20: mirror.operators[3]: catalog "registry.redhat.io/redhat/redhat-operator-index:v4.17": its CatalogSource would be cs-redhat-operator-index, like the one of mirror.operators[1]: give one of them a targetCatalog`}},
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
