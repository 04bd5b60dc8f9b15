package cluster

import (
	"os/exec"
	"strings"
	"testing"
)

// TestBinaryLinksNoBuiltinAPITypes keeps client-go's scheme of every built-in API group (k8s.io/api,
// a third of the binary's code when client-go's discovery linked it) out of the bootstrap binary:
// everything it applies is unstructured, mapped by mapper.go.
func TestBinaryLinksNoBuiltinAPITypes(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/bootstrap-dev/bootstrap/cmd/bootstrap").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, p := range strings.Fields(string(out)) {
		if strings.HasPrefix(p, "k8s.io/api/") || p == "k8s.io/client-go/kubernetes/scheme" || p == "k8s.io/client-go/discovery" {
			t.Errorf("cmd/bootstrap links %s (see internal/cluster/mapper.go and README's Binary size)", p)
		}
	}
}
