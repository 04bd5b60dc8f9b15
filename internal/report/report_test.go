package report_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
	"github.com/bootstrap-dev/bootstrap/internal/report"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// copyStage records two steps and writes one file, like a small mirror stage.
type copyStage struct{}

func (copyStage) Name() string                      { return "mirror" }
func (copyStage) Summary() string                   { return "test" }
func (copyStage) Inputs(*pipeline.Env) (any, error) { return "v1", nil }
func (copyStage) Run(_ context.Context, env *pipeline.Env) (any, error) {
	for _, d := range []string{"sha256:aaa", "sha256:bbb"} {
		if err := env.Steps.Record("image "+d, map[string]string{"digest": d}); err != nil {
			return nil, err
		}
	}
	return map[string]int{"images": 2}, os.WriteFile(filepath.Join(env.WorkDir, "idms.yaml"), []byte("kind: ImageDigestMirrorSet\n"), 0o644)
}

func TestReport(t *testing.T) {
	dir := t.TempDir()
	r := &pipeline.Runner{Stages: []pipeline.Stage{copyStage{}}, Site: &site.Site{}, WorkDir: dir}
	if err := r.Run(context.Background(), pipeline.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	rep, err := report.Build(r, "lab")
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Chain.Verified || rep.Chain.Entries == 0 {
		t.Fatalf("chain: %+v", rep.Chain)
	}
	if got := len(rep.Steps["mirror"]); got != 2 {
		t.Fatalf("steps: %d, want 2", got)
	}
	if len(rep.Files) != 1 || rep.Files[0].Path != "idms.yaml" ||
		rep.Files[0].SHA256 != "a6ea237c6e86f11e842f23fad2b2be6d836f446c73284d03d8be02a463f04c74" {
		t.Fatalf("files: %+v", rep.Files)
	}
	var md bytes.Buffer
	if err := rep.Markdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"hash chain **verified**", "| mirror | succeeded |", "sha256:bbb", "`idms.yaml`"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}

	var html bytes.Buffer
	if err := rep.HTML(&html); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`id="timeline"`, "hash chain verified", "a6ea237c6e86f11e842f23fad2b2be6d836f446c73284d03d8be02a463f04c74"} {
		if !strings.Contains(html.String(), want) {
			t.Errorf("html lacks %q", want)
		}
	}
	if strings.Contains(html.String(), "<script") || strings.Contains(html.String(), "http://") {
		t.Error("html is not self-contained")
	}

	// Edit one entry: the report says the chain is broken, naming the entry.
	path := pipeline.JournalPath(dir)
	b, _ := os.ReadFile(path)
	if err := os.WriteFile(path, bytes.Replace(b, []byte("sha256:aaa"), []byte("sha256:zzz"), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	rep, err = report.Build(r, "lab")
	if err != nil {
		t.Fatal(err)
	}
	if rep.Chain.Verified || rep.Chain.Error == "" {
		t.Fatalf("edited journal verified: %+v", rep.Chain)
	}
	md.Reset()
	_ = rep.Markdown(&md)
	if !strings.Contains(md.String(), "HASH CHAIN BROKEN") {
		t.Fatalf("markdown does not say the chain is broken:\n%s", md.String())
	}
}
