package stages

import (
	"reflect"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/install"
	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
)

// TestEveryStageDeclaresItsOutput: every stage of the pipeline declares the output type its key
// under its own name carries, and no other key's, so the runner refuses an output its readers would
// decode into zeros.
func TestEveryStageDeclaresItsOutput(t *testing.T) {
	byName := map[string]any{
		PreflightOutputKey.Stage(): PreflightOutput{},
		MirrorOutputKey.Stage():    MirrorOutput{},
		ISOOutputKey.Stage():       ISOOutput{},
		BootOutputKey.Stage():      BootOutput{},
		InstallOutputKey.Stage():   install.Result{},
		ConfigureOutputKey.Stage(): ConfigureOutput{},
		HandoffOutputKey.Stage():   HandoffOutput{},
	}
	all := All()
	if len(all) != len(byName) {
		t.Fatalf("%d stages, %d output keys", len(all), len(byName))
	}
	for _, s := range all {
		typed, ok := s.(pipeline.OutputTyped)
		if !ok {
			t.Errorf("stage %s declares no output type (OutputContract in outputs.go)", s.Name())
			continue
		}
		own, ok := byName[s.Name()]
		if !ok {
			t.Errorf("stage %s has no output key under its name", s.Name())
			continue
		}
		for name, out := range byName {
			if got, want := typed.OutputContract().Accepts(out), name == s.Name(); got != want {
				t.Errorf("stage %s accepts the %s stage's output type %T: %t, want %t", s.Name(), name, out, got, want)
			}
		}
		if !typed.OutputContract().Accepts(reflect.New(reflect.TypeOf(own)).Interface()) {
			t.Errorf("stage %s refuses a pointer to its own output type", s.Name())
		}
		if c := typed.OutputContract(); c.Stage() != s.Name() || c.Version() < 1 {
			t.Errorf("stage %s declares the output of %q version %d", s.Name(), c.Stage(), c.Version())
		}
	}
}
