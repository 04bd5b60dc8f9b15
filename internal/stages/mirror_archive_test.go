package stages

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/bootstrap-dev/bootstrap/internal/mirror"
	"github.com/bootstrap-dev/bootstrap/internal/mirror/mirrortest"
	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
	"github.com/bootstrap-dev/bootstrap/internal/preflight"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// mirror.source.archiveDir: the stage loads a disk mirror split into parts (written as
// `bootstrap mirror --archive-size file://DIR` writes it) into the site registry, and preflight
// checks the archive's parts.
func TestMirrorStageFromArchive(t *testing.T) {
	logrus.SetOutput(io.Discard)
	ctx := t.Context()
	src, dst, b := mirrortest.Pair(t, 11)
	refs, err := b.Sample(ctx, src.Host, 8)
	if err != nil {
		t.Fatal(err)
	}
	// the connected side: a disk mirror in parts of 32 KiB
	archive := t.TempDir()
	o := mirror.DefaultOptions(mirror.Endpoint{})
	o.Source = mirror.Endpoint{Insecure: true}
	o.DestDir = mirror.ArchiveLayout(archive)
	images, _ := mirror.Images(refs, mirror.KindAdditional, "", "archive", "")
	res, err := mirror.Copy(ctx, images, o)
	if err != nil {
		t.Fatal(err)
	}
	if err := mirror.WriteContent(mirror.ArchiveContent(archive), mirror.Content{Images: res.Images}); err != nil {
		t.Fatal(err)
	}
	parts, err := mirror.WriteArchive(archive, o.DestDir, 32<<10, map[string]string{"content.json": mirror.ArchiveContent(archive),
		"index.json": filepath.Join(o.DestDir, "index.json"), "oci-layout": filepath.Join(o.DestDir, "oci-layout")})
	if err != nil || len(parts) < 2 {
		t.Fatalf("archive: %v, %d parts", err, len(parts))
	}
	// the disconnected side gets the parts and archive.json only
	far := t.TempDir()
	for _, name := range append([]string{mirror.ArchiveIndexFile}, partNames(parts)...) {
		data, err := os.ReadFile(filepath.Join(archive, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(far, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	isc := filepath.Join(t.TempDir(), "isc.yaml")
	if err := os.WriteFile(isc, []byte("apiVersion: mirror.openshift.io/v2alpha1\nkind: ImageSetConfiguration\nmirror: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := &site.Site{
		Registry: site.Registry{Host: dst.Host, Namespace: "ocp", CAFile: dst.CAFile, AuthFile: dst.AuthFile},
		Mirror:   site.Mirror{ImageSetConfig: isc, Source: site.MirrorSource{ArchiveDir: far}},
	}
	env := &pipeline.Env{Site: s, WorkDir: t.TempDir(), Steps: newMemSteps()}

	rep := preflight.Runner{Timeout: 20 * time.Second}.Run(context.Background(), MirrorPreflightChecks(env))
	for _, c := range rep.Checks {
		if c.Status != preflight.Pass {
			t.Errorf("preflight %s: %s %s", c.Name, c.Status, c.Message)
		}
	}
	if _, err := (Mirror{}).Inputs(env); err != nil {
		t.Fatal(err)
	}
	out, err := (Mirror{}).Run(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	if mo := out.(MirrorOutput); mo.Images != len(refs) {
		t.Errorf("output %+v, want %d images", mo, len(refs))
	}
	if err := (Mirror{}).Verify(ctx, env); err != nil {
		t.Errorf("verify: %v", err)
	}

	// a part missing from the directory is reported by preflight
	if err := os.Remove(filepath.Join(far, parts[0].Name)); err != nil {
		t.Fatal(err)
	}
	rep = preflight.Runner{Timeout: 20 * time.Second}.Run(context.Background(), MirrorPreflightChecks(env))
	found := false
	for _, c := range rep.Checks {
		if c.Name == "mirror archive "+far+" readable" {
			found = c.Status == preflight.Warn
		}
	}
	if !found {
		t.Errorf("missing part not warned about: %+v", rep.Checks)
	}
}

func partNames(ps []mirror.ArchivePart) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Name)
	}
	return out
}
