package mirror

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportsNoPipeline keeps doc.go's promise: the mirror engine reaches no package of this module
// but the leaves units, filehash, fsroot, suggest, yamlstrict, finding, poll and redact (registry error text is redacted before it is cut), and its own leaf mirror/tarpart (the part reader), so never the pipeline or a renderer.
func TestImportsNoPipeline(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	const self = "github.com/bootstrap-dev/bootstrap/internal/"
	for _, p := range strings.Fields(string(out)) {
		switch strings.TrimPrefix(p, self) {
		case p, "mirror", "units", "filehash", "fsroot", "suggest", "yamlstrict", "finding", "poll", "redact", "mirror/tarpart":
		default:
			t.Errorf("mirror imports %s; of this module it may import only internal/units, internal/filehash, internal/fsroot, internal/suggest, internal/yamlstrict, internal/finding, internal/poll and internal/redact", p)
		}
	}
}
