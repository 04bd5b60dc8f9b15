package agentiso

import (
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/bmc"
)

// TestURLLimitIsTheBMCs keeps the ISO server's URL limit the boot stage's: a URL the server hands
// out must be one InsertMedia takes.
func TestURLLimitIsTheBMCs(t *testing.T) {
	if MaxURLLength != bmc.MaxMediaURL {
		t.Fatalf("agentiso.MaxURLLength = %d, bmc.MaxMediaURL = %d: keep them equal", MaxURLLength, bmc.MaxMediaURL)
	}
}
