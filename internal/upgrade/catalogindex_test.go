package upgrade

import "testing"

// A site installed from a mirror subscribes through the CatalogSources the mirror named
// (cs-<index>-v4-NN); the delta maps them back to their index as it maps the default names.
func TestCatalogIndex(t *testing.T) {
	for src, want := range map[string]string{
		"redhat-operators":                  "registry.redhat.io/redhat/redhat-operator-index",
		"cs-certified-operator-index-v4-18": "registry.redhat.io/redhat/certified-operator-index",
		"cs-redhat-operator-index-v4-21":    "registry.redhat.io/redhat/redhat-operator-index",
		"cs-my-index-v4-18":                 "",
		"cs-redhat-operator-index":          "",
		"my-operators":                      "",
	} {
		got, ok := catalogIndex(src)
		if got != want || ok != (want != "") {
			t.Errorf("catalogIndex(%q) = %q, %v; want %q", src, got, ok, want)
		}
	}
}
