package report_test

import (
	"bytes"
	"context"
	"encoding/json"
	"html"
	"strings"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/bmc"
	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
	"github.com/bootstrap-dev/bootstrap/internal/report"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// verdictStage journals each node's booted step the way bmc.BootNode does (a bmc.NodeResult).
type verdictStage struct{ results []bmc.NodeResult }

func (verdictStage) Name() string                      { return "boot" }
func (verdictStage) Summary() string                   { return "test boot" }
func (verdictStage) Inputs(*pipeline.Env) (any, error) { return "v1", nil }
func (s verdictStage) Run(_ context.Context, env *pipeline.Env) (any, error) {
	for _, r := range s.results {
		if err := env.Steps.Record(pipeline.NodeStep(r.Node, bmc.StepConfirm), r); err != nil {
			return nil, err
		}
	}
	return nil, nil
}

// TestReportBootVerdicts: the Markdown, HTML and JSON reports show each node's boot evidence,
// and a node booted without evidence as "booted, unverified" with its whole reason.
func TestReportBootVerdicts(t *testing.T) {
	why := "no sign of a reboot can be read: power was already On, the BMC reports neither LastResetTime nor BootProgress, and a persistent override is never consumed; with the ISO served elsewhere no fetch log shows a read"
	dir := t.TempDir()
	st := verdictStage{results: []bmc.NodeResult{
		{Node: "m0", Evidence: "power Off then On; ISO read by the node after the power action"},
		{Node: "g1", Unverified: why},
	}}
	r := &pipeline.Runner{Stages: []pipeline.Stage{st}, Site: &site.Site{}, WorkDir: dir}
	if err := r.Run(context.Background(), pipeline.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	rep, err := report.Build(r, "lab")
	if err != nil {
		t.Fatal(err)
	}
	var md, htm, js bytes.Buffer
	if err := rep.Markdown(&md); err != nil {
		t.Fatal(err)
	}
	if err := rep.HTML(&htm); err != nil {
		t.Fatal(err)
	}
	if err := rep.JSON(&js); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Boot evidence per node",
		"| g1 | booted, unverified | none | " + why + " | 1 |",
		"| m0 | booted | power Off then On; ISO read by the node after the power action | - | 1 |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
	page := html.UnescapeString(htm.String())
	for _, want := range []string{`id="boot"`, `<td class="warn">booted, unverified</td><td>none</td><td><span class="warn">` + why,
		`<td class="ok">booted</td><td>power Off then On<br>ISO read by the node after the power action<br></td>`} {
		if !strings.Contains(page, want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
	var got struct {
		Evidence struct {
			Boot []struct {
				Node, State, Unverified string
				Evidence                []string
			}
		}
	}
	if err := json.Unmarshal(js.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	b := got.Evidence.Boot
	if len(b) != 2 || b[0].Node != "g1" || b[0].State != "booted, unverified" || b[0].Unverified != why || len(b[0].Evidence) != 0 ||
		b[1].Node != "m0" || b[1].State != "booted" || len(b[1].Evidence) != 2 {
		t.Errorf("JSON report boot: %+v", b)
	}
}
