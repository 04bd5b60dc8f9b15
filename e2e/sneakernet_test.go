//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/regclient/regclient"
	"github.com/regclient/regclient/config"

	"github.com/bootstrap-dev/bootstrap/e2e/lab/harness"
	"github.com/bootstrap-dev/bootstrap/internal/mirror/mirrortest"
)

// TestSneakernetFilteredCatalogs is the air-gapped workflow a disconnected site uses, with the
// lab's filtered operator catalogs: `bootstrap mirror file://USB` with archive parts on the
// connected side (catalogs filtered there), a second run writing no new part, then on the jump
// host `--from file://USB` into the TLS + htpasswd registry (the Quay stand-in) and the mirror
// stage with mirror.source.archiveDir; the CatalogSources name the loaded catalogs, --verify
// passes, and the real opm serves every loaded catalog.
func TestSneakernetFilteredCatalogs(t *testing.T) {
	l := startLab(t)
	b, err := os.ReadFile(l.SiteFile)
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Registry struct{ Host, Namespace, CAFile, AuthFile string }
		Mirror   struct {
			ImageSetConfig string
			Source         struct{ Registry, CAFile string }
		}
	}
	if err := json.Unmarshal(b[bytes.IndexByte(b, '{'):], &s); err != nil {
		t.Fatal(err)
	}
	mirrorCmd := func(want int, args ...string) string {
		t.Helper()
		cmd := exec.Command(l.bin, append([]string{"mirror"}, args...)...)
		cmd.Dir = l.Dir
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != want {
			t.Fatalf("bootstrap mirror %s: exit %d, want %d\n%s", strings.Join(args, " "), code, want, tail(string(out), 40))
		}
		return string(out)
	}
	usb := filepath.Join(t.TempDir(), "usb")
	toDisk := []string{"-c", s.Mirror.ImageSetConfig, "--source-registry", s.Mirror.Source.Registry, "--src-ca-file", s.Mirror.Source.CAFile,
		"--archive-size-bytes", "1048576", "--workspace", "file://" + t.TempDir(), "file://" + usb}
	out := mirrorCmd(0, toDisk...)
	if !strings.Contains(out, "new part(s)") {
		t.Fatalf("to disk wrote no part:\n%s", out)
	}
	if out := mirrorCmd(0, toDisk...); !strings.Contains(out, "nothing new") {
		t.Fatalf("a second disk run with nothing new wrote parts:\n%s", out)
	}
	// the jump host: only the parts and archive.json are carried
	far := t.TempDir()
	parts, _ := filepath.Glob(filepath.Join(usb, "mirror_*.tar"))
	for _, p := range append(parts, filepath.Join(usb, "archive.json")) {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(far, filepath.Base(p)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ws := t.TempDir()
	dest := "docker://" + s.Registry.Host + "/" + s.Registry.Namespace
	out = mirrorCmd(0, "-c", s.Mirror.ImageSetConfig, "--from", "file://"+far, "--ca-file", s.Registry.CAFile, "--authfile", s.Registry.AuthFile,
		"--workspace", "file://"+ws, dest)
	if !strings.Contains(out, "0 failed") || strings.Count(out, " cs-") < 1 {
		t.Fatalf("from disk:\n%s", out)
	}
	mirrorCmd(0, "-c", s.Mirror.ImageSetConfig, "--verify", "--ca-file", s.Registry.CAFile, "--authfile", s.Registry.AuthFile, "--workspace", "file://"+ws, dest)

	// every CatalogSource names a filtered catalog the real opm serves
	css, _ := filepath.Glob(filepath.Join(ws, "working-dir", "cluster-resources", "cs-*.yaml"))
	if len(css) != 2 {
		t.Fatalf("%d CatalogSources, want the lab's 2 catalogs", len(css))
	}
	ca, _ := os.ReadFile(filepath.Join(l.Dir, s.Registry.CAFile))
	pass, _ := os.ReadFile(filepath.Join(l.Dir, "secrets", "registry.password"))
	rc := regclient.New(regclient.WithConfigHost(config.Host{Name: s.Registry.Host, RegCert: string(ca), User: harness.RegistryUser, Pass: strings.TrimSpace(string(pass))}))
	imageLine := regexp.MustCompile(`image: (\S+)`)
	for _, cs := range css {
		b, _ := os.ReadFile(cs)
		m := imageLine.FindSubmatch(b)
		if m == nil || !strings.HasPrefix(string(m[1]), s.Registry.Host+"/"+s.Registry.Namespace+"/") {
			t.Fatalf("%s names no loaded catalog:\n%s", cs, b)
		}
		if opm := mirrortest.OPM(); opm != "" {
			configs := filepath.Join(t.TempDir(), "configs")
			if n, err := mirrortest.TopLayerFiles(t.Context(), rc, string(m[1]), "configs/", configs); err != nil || n == 0 {
				t.Fatalf("%s: extract %s: %d files, %v", cs, m[1], n, err)
			}
			mirrortest.Serves(t, opm, configs)
		}
	}

	// the mirror stage loads the same disk mirror with mirror.source.archiveDir
	l.editSite(t, func(m map[string]any) {
		src := m["mirror"].(map[string]any)["source"].(map[string]any)
		delete(src, "registry")
		delete(src, "caFile")
		src["archiveDir"] = far
	})
	r := l.mustRun(t, 0, "run", "--until", "mirror")
	if !strings.Contains(r.out, "mirror") {
		t.Fatalf("run --until mirror:\n%s", tail(r.out, 30))
	}
	staged, _ := filepath.Glob(filepath.Join(l.workDir(), "cs-*.yaml"))
	if len(staged) != 2 {
		t.Fatalf("the mirror stage wrote %d CatalogSources from the disk mirror, want 2", len(staged))
	}
}
