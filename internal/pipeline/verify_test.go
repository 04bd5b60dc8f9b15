package pipeline_test

import (
	"context"
	"errors"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// selfCheck verifies against its own last output, as the iso stage does (the ISO's hash).
type selfCheck struct{ runs *int }

func (selfCheck) Name() string                      { return "iso" }
func (selfCheck) Summary() string                   { return "verifies its own output" }
func (selfCheck) Inputs(*pipeline.Env) (any, error) { return 1, nil }
func (s selfCheck) Run(context.Context, *pipeline.Env) (any, error) {
	*s.runs++
	return map[string]string{"sha256": "abc"}, nil
}
func (selfCheck) Verify(_ context.Context, env *pipeline.Env) error {
	out, ok, err := pipeline.OutputKey[struct{ SHA256 string }]("iso").Read(env)
	if err != nil || !ok || out.SHA256 != "abc" {
		return errors.New("no previous output to verify")
	}
	return nil
}

func TestVerifySeesOwnOutput(t *testing.T) {
	runs := 0
	r := &pipeline.Runner{Stages: []pipeline.Stage{selfCheck{&runs}}, Site: &site.Site{}, WorkDir: t.TempDir()}
	for i := 0; i < 2; i++ {
		if err := r.Run(context.Background(), pipeline.RunOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if runs != 1 {
		t.Fatalf("stage ran %d times; the second run should verify and skip", runs)
	}
	plans, err := r.Plan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if plans[0].Action != pipeline.PlanSkip {
		t.Fatalf("plan: %+v", plans[0])
	}
}
