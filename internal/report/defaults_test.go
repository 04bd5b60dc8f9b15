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

// The report records the values bootstrap chose for what the profile leaves out, in every format.
func TestReportNamesDefaults(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "site.yaml")
	profile := "apiVersion: bootstrap.openshift.io/v1alpha1\nkind: Site\ncluster:\n  networking:\n    machineNetwork: [fd00:30::/64]\n" +
		"    serviceNetwork: [fd02::/112]\n"
	if err := os.WriteFile(file, []byte(profile), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := site.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := report.Build(&pipeline.Runner{Site: s, WorkDir: filepath.Join(dir, ".bootstrap")}, "lab")
	if err != nil {
		t.Fatal(err)
	}
	var md, html bytes.Buffer
	if err := rep.Markdown(&md); err != nil {
		t.Fatal(err)
	}
	if err := rep.HTML(&html); err != nil {
		t.Fatal(err)
	}
	for what, text := range map[string]string{"markdown": md.String(), "html": html.String()} {
		if !strings.Contains(text, "cluster.networking.clusterNetwork") || !strings.Contains(text, "fd01::/48 hostPrefix 64") {
			t.Errorf("%s names no chosen cluster network:\n%s", what, text)
		}
		if strings.Contains(text, "cluster.networking.serviceNetwork") {
			t.Errorf("%s names the profile's own service network as a default", what)
		}
	}
}
