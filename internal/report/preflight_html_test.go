package report_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
	"github.com/bootstrap-dev/bootstrap/internal/report"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// The preflight rows (preflight.json, findings with the one status enum) render in every format,
// each row's class from its status: the HTML template once compared the status with a string and
// failed on the first row.
func TestReportPreflightRowsInEveryFormat(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "site.yaml")
	profile := "apiVersion: bootstrap.openshift.io/v1alpha1\nkind: Site\ncluster:\n  networking:\n    machineNetwork: [10.30.0.0/24]\n"
	if err := os.WriteFile(file, []byte(profile), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := site.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(dir, ".bootstrap")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	pf := `{"checks":[{"name":"dns api","category":"dns","status":"pass","message":"api.lab.site.test resolves"},` +
		`{"name":"ntp 10.30.0.1","category":"ntp","status":"fail","message":"no answer","remedy":"start chronyd"},` +
		`{"name":"disk /","category":"jump-host","status":"warn","message":"12 GiB free"}]}`
	if err := os.WriteFile(filepath.Join(work, "preflight.json"), []byte(pf), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := report.Build(&pipeline.Runner{Site: s, WorkDir: work}, "lab")
	if err != nil {
		t.Fatal(err)
	}
	var md, html, js bytes.Buffer
	if err := rep.Markdown(&md); err != nil {
		t.Fatal(err)
	}
	if err := rep.HTML(&html); err != nil {
		t.Fatalf("html: %v", err)
	}
	if err := rep.JSON(&js); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`class="ok">pass<`, `class="bad">fail<`, `class="warn">warn<`, "start chronyd"} {
		if !strings.Contains(html.String(), want) {
			t.Errorf("html lacks %q", want)
		}
	}
	for what, text := range map[string]string{"markdown": md.String(), "json": js.String()} {
		if !strings.Contains(text, "no answer") || !strings.Contains(text, "api.lab.site.test resolves") {
			t.Errorf("%s lacks the preflight rows:\n%s", what, text)
		}
	}
}
