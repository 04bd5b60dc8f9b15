package stages

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/bmc"
	"github.com/bootstrap-dev/bootstrap/internal/bmc/bmctest"
	"github.com/bootstrap-dev/bootstrap/internal/mirror"
	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
	"github.com/bootstrap-dev/bootstrap/internal/preflight"
)

// The domain errors a stage returns keep the remedy contract, so the runner journals their own
// remedy (pipeline/remedy_test.go walks every error type; this pins the ones the stages return).
var (
	_ pipeline.Remedier = (*bmc.Error)(nil)
	_ pipeline.Remedier = (*mirror.RegistryError)(nil)
	_ pipeline.Remedier = (*preflight.FailedError)(nil)
)

// TestBootFailureCarriesTheBMCRemedy: a node whose iDRAC cannot fetch the ISO fails the boot stage
// with an error whose Remedy (what the runner journals) is the BMC's precise one, not the generic
// "fix the cause and run again".
func TestBootFailureCarriesTheBMCRemedy(t *testing.T) {
	lab := newBootLab(t, "a")
	env := lab.env(&bootSteps{m: map[string][]byte{}}, nil)
	env.Outputs["iso"] = json.RawMessage(fmt.Sprintf(`{"url":%q}`, lab.iso.URL()+"/shared.iso"))
	lab.sims["a"].Inject(bmctest.Fault{Op: "insert", Status: 400, MessageID: "IDRAC.2.8.RAC0904"})
	_, err := fastBoot().Run(context.Background(), env)
	var rem pipeline.Remedier
	if !errors.As(err, &rem) || !strings.Contains(rem.Remedy(), "iso.baseURL") {
		t.Fatalf("boot failure %v: want a Remedier whose remedy names iso.baseURL", err)
	}
}
