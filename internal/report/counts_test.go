package report_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
	"github.com/bootstrap-dev/bootstrap/internal/report"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// twiceStage records one step twice (a re-check records its step again) and another once.
type twiceStage struct{}

func (twiceStage) Name() string                      { return "configure" }
func (twiceStage) Summary() string                   { return "test" }
func (twiceStage) Inputs(*pipeline.Env) (any, error) { return "v1", nil }
func (twiceStage) Run(_ context.Context, env *pipeline.Env) (any, error) {
	for _, k := range []string{"applied", "applied", "verified"} {
		if err := env.Steps.Record(k, map[string]int{"n": 1}); err != nil {
			return nil, err
		}
	}
	return nil, nil
}

// The stages table, the attempt's heading and the HTML count steps the same way: a step
// recorded twice is one step, its second record said as such.
func TestStepCountsAgree(t *testing.T) {
	r := &pipeline.Runner{Stages: []pipeline.Stage{twiceStage{}}, Site: &site.Site{}, WorkDir: t.TempDir()}
	if err := r.Run(context.Background(), pipeline.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	rep, err := report.Build(r, "lab")
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Stages) != 1 || rep.Stages[0].Steps != 2 {
		t.Fatalf("stages: %+v, want configure with 2 steps", rep.Stages)
	}
	var md, html bytes.Buffer
	if err := rep.Markdown(&md); err != nil {
		t.Fatal(err)
	}
	if err := rep.HTML(&html); err != nil {
		t.Fatal(err)
	}
	want := "2 steps (3 records: 1 recorded again"
	for name, out := range map[string]string{"markdown": md.String(), "html": html.String()} {
		if !strings.Contains(out, want) {
			t.Errorf("%s lacks %q", name, want)
		}
	}
	if !strings.Contains(md.String(), "| configure | succeeded | 1 | 2 |") {
		t.Errorf("markdown's stages table does not say 2 steps:\n%s", md.String())
	}
}
