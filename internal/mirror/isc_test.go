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
      channels: [{name: stable}]
`, []string{"apiVersion", "archiveSize", "platform.graph", "channels[0].shortestPath: not supported", "channels[0].maxVersion: 4.15.9 is not a 4.16 release", "channels[1].name: \"latest\" is not a release channel", "operators[0].catalog: required", "packages[0]: minVersion/maxVersion go on the channels"}},
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
