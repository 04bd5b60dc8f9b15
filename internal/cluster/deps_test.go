package cluster

import (
	"os/exec"
	"strings"
	"testing"
)

// TestBinaryLinksNoBuiltinAPITypes keeps client-go's scheme of every built-in API group (k8s.io/api,
// a third of the binary's code when client-go's discovery linked it) out of the bootstrap binary:
// everything it applies is unstructured, mapped by mapper.go. The only API groups allowed are the
// four that operator-registry's declarative config and model (the catalog filter and opm's own
// validation of filtered catalogs, internal/mirror/filter.go) link through
// github.com/operator-framework/api's ClusterServiceVersion types; no other group, no scheme.
func TestBinaryLinksNoBuiltinAPITypes(t *testing.T) {
	viaOperatorFramework := map[string]bool{"k8s.io/api/core/v1": true, "k8s.io/api/apps/v1": true,
		"k8s.io/api/rbac/v1": true, "k8s.io/api/admissionregistration/v1": true}
	out, err := exec.Command("go", "list", "-deps", "github.com/bootstrap-dev/bootstrap/cmd/bootstrap").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, p := range strings.Fields(string(out)) {
		if strings.HasPrefix(p, "k8s.io/api/") && !viaOperatorFramework[p] || p == "k8s.io/client-go/kubernetes/scheme" || p == "k8s.io/client-go/discovery" {
			t.Errorf("cmd/bootstrap links %s (see internal/cluster/mapper.go and README's Binary size)", p)
		}
	}
}
