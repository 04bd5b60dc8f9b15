package stages

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/regclient/regclient"
	"github.com/regclient/regclient/config"
	"github.com/sirupsen/logrus"

	"github.com/bootstrap-dev/bootstrap/internal/finding"
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
	o := mirror.DefaultOptions(mirror.Dest{})
	o.Source = mirror.Endpoint{Insecure: true}
	o.Dest.Dir = mirror.ArchiveLayout(archive)
	images, _ := mirror.Images(refs, mirror.KindAdditional, "", "archive", "")
	res, err := mirror.Copy(ctx, images, o)
	if err != nil {
		t.Fatal(err)
	}
	if err := mirror.WriteContent(mirror.ArchiveContent(archive), mirror.Content{Images: res.Images}); err != nil {
		t.Fatal(err)
	}
	parts, err := mirror.WriteArchive(archive, o.Dest.Dir, 32<<10, map[string]string{"content.json": mirror.ArchiveContent(archive),
		"index.json": filepath.Join(o.Dest.Dir, "index.json"), "oci-layout": filepath.Join(o.Dest.Dir, "oci-layout")})
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
		if c.Status != finding.Pass {
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
			found = c.Status == finding.Warn
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

// mirror.source.archiveDir with a filtered operator catalog: the connected side writes the disk
// mirror with the domain driver (the catalog filtered there, under its targetCatalog), the stage
// loads it and writes the catalog's CatalogSource naming the loaded filtered catalog, which the
// real opm serves.
func TestMirrorStageLoadsFilteredCatalogFromArchive(t *testing.T) {
	logrus.SetOutput(io.Discard)
	ctx := t.Context()
	src, dst, b := mirrortest.Pair(t, 12)
	cat, err := b.Catalog(ctx, mirrortest.CatalogSpec{PushHost: src.Host, Repo: "redhat/redhat-operator-index", Tag: "v4.18", LayerKiB: 4,
		Packages: []mirrortest.PackageSpec{
			{Name: "nfd", DefaultChannel: "stable", Channels: map[string][]string{"stable": {"4.18.0", "4.18.1"}, "alpha": {"4.19.0"}}},
			{Name: "gitops", DefaultChannel: "latest", Channels: map[string][]string{"latest": {"1.15.0", "1.16.0"}}},
		}})
	if err != nil {
		t.Fatal(err)
	}
	iscPath := filepath.Join(t.TempDir(), "isc.yaml")
	doc := "apiVersion: mirror.openshift.io/v2alpha1\nkind: ImageSetConfiguration\nmirror:\n  operators:\n  - catalog: " + cat.Image +
		"\n    targetCatalog: disconnected/operators\n    packages:\n    - name: nfd\n"
	if err := os.WriteFile(iscPath, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	isc, err := mirror.LoadISC(iscPath)
	if err != nil {
		t.Fatal(err)
	}
	archive := t.TempDir()
	o := mirror.DefaultOptions(mirror.Dest{Dir: archive})
	o.Source = mirror.Endpoint{Insecure: true}
	l, err := mirror.Load(ctx, mirror.Job{ISC: isc, ArchiveBytes: 64 << 10}, &o)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := l.Run(ctx, o)
	if err != nil || len(rep.Parts) == 0 || len(rep.Content.Catalogs) != 1 {
		t.Fatalf("disk mirror: %v, %+v", err, rep)
	}
	s := &site.Site{
		Registry: site.Registry{Host: dst.Host, Namespace: "ocp", CAFile: dst.CAFile, AuthFile: dst.AuthFile},
		Mirror:   site.Mirror{ImageSetConfig: iscPath, Source: site.MirrorSource{ArchiveDir: archive}},
	}
	env := &pipeline.Env{Site: s, WorkDir: t.TempDir(), Steps: newMemSteps()}
	out, err := (Mirror{}).Run(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	// nfd: the heads of stable and alpha, bundle and operator each, and the filtered catalog
	mo := out.(MirrorOutput)
	if mo.Images != 5 || len(mo.Outputs.CatalogSources) != 1 {
		t.Fatalf("output %+v, want 5 images and one CatalogSource", mo)
	}
	cs, _ := os.ReadFile(filepath.Join(env.WorkDir, mo.Outputs.CatalogSources[0]))
	want := "image: " + dst.Host + "/ocp/disconnected/operators@" + rep.Content.Images[len(rep.Content.Images)-1].Digest
	if mo.Outputs.CatalogSources[0] != "cs-operators-v4-18.yaml" || !strings.Contains(string(cs), want) {
		t.Fatalf("%s does not name the loaded filtered catalog (%s):\n%s", mo.Outputs.CatalogSources[0], want, cs)
	}
	if opm := mirrortest.OPM(); opm != "" {
		ca, _ := os.ReadFile(dst.CAFile)
		rc := regclient.New(regclient.WithConfigHost(config.Host{Name: dst.Host, RegCert: string(ca), User: "robot", Pass: "pw"}))
		configs := filepath.Join(t.TempDir(), "configs")
		if n, err := mirrortest.TopLayerFiles(ctx, rc, strings.TrimPrefix(want, "image: "), "configs/", configs); err != nil || n != 1 {
			t.Fatalf("extract the loaded catalog: %d files, %v", n, err)
		}
		mirrortest.Serves(t, opm, configs)
	}
}
