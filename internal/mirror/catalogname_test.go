package mirror

import (
	"strings"
	"testing"
)

// TestCatalogSourceNameAsOCMirror pins the CatalogSource names oc-mirror v2 (4.18+) writes in
// cluster-resources, so that a site's Subscriptions written against oc-mirror's resources name
// the same source after bootstrap mirrors the same ImageSetConfiguration.
func TestCatalogSourceNameAsOCMirror(t *testing.T) {
	digest := "sha256:" + strings.Repeat("0123456789abcdef", 4)
	for _, c := range []struct {
		op   ISCOperator
		want string
	}{
		{ISCOperator{Catalog: "registry.redhat.io/redhat/redhat-operator-index:v4.18"}, "cs-redhat-operator-index-v4-18"},
		{ISCOperator{Catalog: "registry.redhat.io/redhat/certified-operator-index:v4.16"}, "cs-certified-operator-index-v4-16"},
		// targetCatalog's last element and targetTag name the destination, so the source
		{ISCOperator{Catalog: "registry.redhat.io/redhat/redhat-operator-index:v4.18", TargetCatalog: "mirror/gpu-operators", TargetTag: "v1.0"}, "cs-gpu-operators-v1-0"},
		{ISCOperator{Catalog: "registry.redhat.io/redhat/redhat-operator-index:v4.18", TargetCatalog: "gpu-operators"}, "cs-gpu-operators-v4-18"},
		// a tag is cut to 12 characters, lower-cased, anything else than a-z 0-9 - made "-"
		{ISCOperator{Catalog: "quay.io/acme/index:v4.18-20241201abcdef"}, "cs-index-v4-18-202412"},
		{ISCOperator{Catalog: "quay.io/acme/index:V4.18_Beta"}, "cs-index-v4-18-beta"},
		// by digest only: pushed under sha256-<hex>, whose first 12 characters name it
		{ISCOperator{Catalog: "registry.redhat.io/redhat/redhat-operator-index@" + digest}, "cs-redhat-operator-index-sha256-01234"},
		{ISCOperator{Catalog: "registry.redhat.io/redhat/redhat-operator-index@" + digest, TargetTag: "pinned"}, "cs-redhat-operator-index-pinned"},
		// by tag and digest: the tag
		{ISCOperator{Catalog: "registry.redhat.io/redhat/redhat-operator-index:v4.18@" + digest}, "cs-redhat-operator-index-v4-18"},
		// a repository with dots: dashes
		{ISCOperator{Catalog: "quay.io/acme/ops.index:v1"}, "cs-ops-index-v1"},
	} {
		if got := catalogName(c.op); got != c.want {
			t.Errorf("catalogName(%+v) = %q, want %q (oc-mirror v2's name)", c.op, got, c.want)
		}
	}
	if validCatalogSourceName("cs-" + strings.Repeat("a", 61)) {
		t.Error("a 64-character name passed as a CatalogSource name")
	}
	if !validCatalogSourceName("cs-redhat-operator-index-v4-18") || validCatalogSourceName("cs-index-v4-") {
		t.Error("validCatalogSourceName misjudges a DNS-1035 label")
	}
}
