package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opencontainers/go-digest"
	"github.com/regclient/regclient"
	"github.com/regclient/regclient/config"
	"github.com/regclient/regclient/types/descriptor"
	"github.com/regclient/regclient/types/ref"
	"github.com/sirupsen/logrus"

	"github.com/bootstrap-dev/bootstrap/internal/mirror"
	"github.com/bootstrap-dev/bootstrap/internal/mirror/mirrortest"
	"github.com/bootstrap-dev/bootstrap/internal/preflight"
)

func runMirrorCmd(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := newMirrorCmd()
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(args)
	cmd.SetContext(t.Context())
	err := cmd.Execute()
	return out.String() + errOut.String(), err
}

func TestMirrorCommand(t *testing.T) {
	logrus.SetOutput(io.Discard)
	src, dst, b := mirrortest.Pair(t, 3)
	dir := t.TempDir()
	refs := sampleRefs(t, b, src, 8)
	isc := writeISC(t, dir, refs...)
	common := []string{"-c", isc, "--src-tls-verify=false", "--ca-file", dst.CAFile, "--authfile", dst.AuthFile,
		"--workspace", "file://" + dir, "docker://" + dst.Host + "/mirror"}

	out, err := runMirrorCmd(t, append([]string{"--dry-run"}, common...)...)
	if err != nil || !strings.Contains(out, "5 images") || !strings.Contains(out, "saved by dedup") {
		t.Fatalf("dry run: %v\n%s", err, out)
	}
	// a source that does not resolve makes the dry run fail: its totals are not the whole mirror
	bad := writeISC(t, t.TempDir(), append(refs[:1:1], src.Host+"/nowhere/missing:v1")...)
	out, err = runMirrorCmd(t, append([]string{"--dry-run", "-c", bad}, common[2:]...)...)
	if err == nil || !strings.Contains(err.Error(), "1 of 2 images could not be resolved") || !strings.Contains(out, "ERROR") {
		t.Fatalf("dry run with a missing source: want exit 1 naming it, got %v\n%s", err, out)
	}
	out, err = runMirrorCmd(t, common...)
	if err != nil || !strings.Contains(out, "mirrored 5 images (0 already present, 0 failed)") {
		t.Fatalf("mirror: %v\n%s", err, out)
	}
	if strings.Contains(out, "pw") {
		t.Fatalf("output shows the password:\n%s", out)
	}
	res := filepath.Join(dir, "working-dir", "cluster-resources")
	for _, f := range []string{"itms-oc-mirror.yaml", "content.json", "mapping.txt"} {
		if _, err := os.Stat(filepath.Join(res, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	// every image is by tag: like oc-mirror, no empty ImageDigestMirrorSet is written
	if _, err := os.Stat(filepath.Join(res, "idms-oc-mirror.yaml")); !os.IsNotExist(err) {
		t.Errorf("idms-oc-mirror.yaml written with no image by digest (%v)", err)
	}
	out, err = runMirrorCmd(t, common...)
	if err != nil || !strings.Contains(out, "5 already present") || !strings.Contains(out, "0 B pulled") {
		t.Fatalf("second run: %v\n%s", err, out)
	}
	out, err = runMirrorCmd(t, append([]string{"--verify", "-o", "json"}, common...)...)
	if err != nil || !strings.Contains(out, `"images":5`) {
		t.Fatalf("verify: %v\n%s", err, out)
	}
	// without the CA the destination is not trusted: a clear error, nothing copied
	noCA := []string{"-c", isc, "--src-tls-verify=false", "--authfile", dst.AuthFile, "--retries", "0",
		"--workspace", "file://" + t.TempDir(), "docker://" + dst.Host + "/other"}
	out, err = runMirrorCmd(t, noCA...)
	if err == nil || !strings.Contains(err.Error(), "presented chain") || !strings.Contains(err.Error(), "--ca-file") {
		t.Fatalf("untrusted destination: want a certificate error, got %v\n%s", err, out)
	}
}

func TestMirrorCommandRejectsUnknownISCField(t *testing.T) {
	isc := filepath.Join(t.TempDir(), "isc.yaml")
	doc := "apiVersion: mirror.openshift.io/v2alpha1\nkind: ImageSetConfiguration\nmirror:\n  helm:\n    repositories: []\n"
	if err := os.WriteFile(isc, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := runMirrorCmd(t, "-c", isc, "docker://127.0.0.1:1/x")
	if err == nil || !strings.Contains(err.Error(), isc+":4:3: error: mirror.helm: field \"helm\" is not supported") {
		t.Fatalf("want an error naming file, line 4 and field helm, got %v", err)
	}
	if !strings.Contains(out, isc+":4:3: error: mirror.helm: field \"helm\" is not supported\n    fix: remove it") {
		t.Errorf("the problem is not shown with its remedy:\n%s", out)
	}
}

// TestMirrorCommandShowsEveryISCProblem: text lists every problem of the ImageSetConfiguration
// with its line (remedy below); -o json has one "problem" line each, as validate -o json.
func TestMirrorCommandShowsEveryISCProblem(t *testing.T) {
	isc := filepath.Join(t.TempDir(), "isc.yaml")
	doc := "apiVersion: mirror.openshift.io/v2alpha1\nkind: ImageSetConfiguration\narchiveSize: four\nmirror:\n  helm: {}\n  additionalImages:\n  - name: a\n    name: b\n  - {}\n"
	if err := os.WriteFile(isc, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	want := []string{
		isc + ":3:14: error: archiveSize: expected a whole number",
		isc + ":5:3: error: mirror.helm: field \"helm\" is not supported",
		isc + ":8:5: error: mirror.additionalImages[0].name: field \"name\" is written twice",
		isc + ":9:5: error: mirror.additionalImages[1].name: required",
	}
	var stdout, stderr bytes.Buffer
	if code := Execute([]string{"mirror", "-c", isc, "docker://127.0.0.1:1/x"}, nil, &stdout, &stderr); code != exitInvalid {
		t.Errorf("exit code %d, want %d (invalid input, as an invalid profile)", code, exitInvalid)
	}
	for _, w := range want {
		if !strings.Contains(stderr.String(), w) {
			t.Errorf("stderr lacks %q:\n%s", w, stderr.String())
		}
	}
	stdout.Reset()
	stderr.Reset()
	Execute([]string{"mirror", "-o", "json", "-c", isc, "docker://127.0.0.1:1/x"}, nil, &stdout, &stderr)
	kinds, res, _ := jsonLinesOf(t, stdout.String())
	if strings.Count(strings.Join(kinds, " "), "problem") != len(want) || res.OK || res.ExitCode != exitInvalid {
		t.Fatalf("want %d problem lines and a failed result, got %v %+v", len(want), kinds, res)
	}
	var first struct {
		File, Path, Message, Remedy string
		Line, Column                int
	}
	if err := json.Unmarshal([]byte(strings.SplitN(stdout.String(), "\n", 2)[0]), &first); err != nil {
		t.Fatal(err)
	}
	if first.File != isc || first.Line != 3 || first.Column != 14 || first.Path != "archiveSize" || first.Remedy == "" {
		t.Errorf("first problem line: %+v", first)
	}
}

// TestMirrorCommandDiskRoundTrip: file://DIR on the connected side (incremental on a rerun), then
// --from file://DIR into a registry; a corrupted blob in the archive is caught before pushing.
func TestMirrorCommandDiskRoundTrip(t *testing.T) {
	logrus.SetOutput(io.Discard)
	src, dst, b := mirrortest.Pair(t, 5)
	dir := t.TempDir()
	isc := writeISC(t, dir, sampleRefs(t, b, src, 16)...)
	archive := filepath.Join(dir, "archive")
	toDir := []string{"-c", isc, "--src-tls-verify=false", "file://" + archive}
	if out, err := runMirrorCmd(t, toDir...); err != nil || !strings.Contains(out, "mirrored 5 images (0 already present") {
		t.Fatalf("to dir: %v\n%s", err, out)
	}
	for _, f := range []string{"oci-layout", "index.json", "content.json"} {
		if _, err := os.Stat(filepath.Join(archive, f)); err != nil {
			t.Fatalf("archive lacks %s: %v", f, err)
		}
	}
	if out, err := runMirrorCmd(t, toDir...); err != nil || !strings.Contains(out, "5 already present") || !strings.Contains(out, "0 B pulled") {
		t.Fatalf("to dir again: %v\n%s", err, out)
	}
	ws := "file://" + filepath.Join(dir, "ws")
	fromDir := []string{"-c", isc, "--from", "file://" + archive, "--ca-file", dst.CAFile, "--authfile", dst.AuthFile, "--workspace", ws}
	if out, err := runMirrorCmd(t, append(fromDir, "docker://"+dst.Host+"/site")...); err != nil || !strings.Contains(out, "mirrored 5 images (0 already present, 0 failed)") {
		t.Fatalf("from dir: %v\n%s", err, out)
	}
	if out, err := runMirrorCmd(t, "-c", isc, "--verify", "--ca-file", dst.CAFile, "--authfile", dst.AuthFile, "--workspace", ws, "docker://"+dst.Host+"/site"); err != nil {
		t.Fatalf("verify: %v\n%s", err, out)
	}
	// corrupt the largest blob of the archive: pushing into a fresh namespace must refuse it
	var big string
	var bigSize int64
	blobs, _ := filepath.Glob(filepath.Join(archive, "blobs", "sha256", "*"))
	for _, p := range blobs {
		if st, err := os.Stat(p); err == nil && st.Size() > bigSize {
			big, bigSize = p, st.Size()
		}
	}
	data, _ := os.ReadFile(big)
	data[len(data)/2] ^= 0xff
	if err := os.WriteFile(big, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := runMirrorCmd(t, append(append(fromDir[:len(fromDir):len(fromDir)], "--retries", "0"), "docker://"+dst.Host+"/other")...)
	if err == nil || !strings.Contains(out, "FAILED") {
		t.Fatalf("a corrupt archive blob must fail its image: %v\n%s", err, out)
	}
	rc := regclient.New(regclient.WithConfigHost(config.Host{Name: dst.Host, RegCert: readFile(t, dst.CAFile), User: "robot", Pass: "pw"}))
	r, _ := ref.New(dst.Host + "/other/ocp/app-a")
	if _, err := rc.BlobHead(t.Context(), r, descriptor.Descriptor{Digest: digest.Digest("sha256:" + filepath.Base(big))}); err == nil {
		t.Fatal("the corrupt blob reached the destination")
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestMirrorProgressLine(t *testing.T) {
	var buf bytes.Buffer
	p := mirrorProgress(&buf, false, false)
	p(mirror.Progress{BytesDone: 50 << 20, BytesTotal: 100 << 20, BlobsDone: 40, BlobsTotal: 61, ImagesDone: 3, ImagesTotal: 10, Elapsed: 10 * time.Second})
	p(mirror.Progress{BytesDone: 60 << 20, BytesTotal: 100 << 20, ImagesDone: 4, ImagesTotal: 10, Elapsed: 11 * time.Second})
	got := buf.String()
	if want := "50.0 MiB / 100.0 MiB  5.0 MiB/s  ETA 10s  blobs 40/61  images 3/10  failed 0\n"; got != want {
		t.Fatalf("progress output %q, want one line %q (the second is within 2 s)", got, want)
	}
	buf.Reset()
	mirrorProgress(&buf, true, false)(mirror.Progress{BytesDone: 1, BytesTotal: 2, ImagesTotal: 1})
	if !strings.Contains(buf.String(), `"kind":"progress"`) || !strings.Contains(buf.String(), `"bytesTotal":2`) || !strings.Contains(buf.String(), `"blobsTotal":0`) {
		t.Fatalf("json progress %q", buf.String())
	}
}

// file:// with an archive size writes numbered parts and archive.json; a second run writes no
// part; the parts alone, carried to another directory, are pushed by --from.
func TestMirrorCommandArchiveParts(t *testing.T) {
	logrus.SetOutput(io.Discard)
	src, dst, b := mirrortest.Pair(t, 9)
	dir := t.TempDir()
	isc := writeISC(t, dir, sampleRefs(t, b, src, 16)...)
	archive := filepath.Join(dir, "archive")
	toDir := []string{"-c", isc, "--src-tls-verify=false", "--archive-size-bytes", "65536", "file://" + archive}
	out, err := runMirrorCmd(t, toDir...)
	if err != nil || !strings.Contains(out, "mirrored 5 images") || !strings.Contains(out, "new part(s)") {
		t.Fatalf("to dir: %v\n%s", err, out)
	}
	parts, _ := filepath.Glob(filepath.Join(archive, "mirror_*.tar"))
	if len(parts) < 2 {
		t.Fatalf("%d parts, want several of 64 KiB", len(parts))
	}
	if out, err := runMirrorCmd(t, toDir...); err != nil || !strings.Contains(out, "nothing new") {
		t.Fatalf("to dir again: %v\n%s", err, out)
	}
	far := t.TempDir()
	for _, p := range append(parts, filepath.Join(archive, "archive.json")) {
		write(t, filepath.Join(far, filepath.Base(p)), []byte(readFile(t, p)), 0o644)
	}
	ws := "file://" + filepath.Join(dir, "ws")
	fromDir := []string{"-c", isc, "--from", "file://" + far, "--ca-file", dst.CAFile, "--authfile", dst.AuthFile, "--workspace", ws, "docker://" + dst.Host + "/site"}
	if out, err := runMirrorCmd(t, fromDir...); err != nil || !strings.Contains(out, "mirrored 5 images (0 already present, 0 failed)") {
		t.Fatalf("from the parts: %v\n%s", err, out)
	}
	if out, err := runMirrorCmd(t, "-c", isc, "--verify", "--ca-file", dst.CAFile, "--authfile", dst.AuthFile, "--workspace", ws, "docker://"+dst.Host+"/site"); err != nil {
		t.Fatalf("verify: %v\n%s", err, out)
	}
}

// A file:// run whose disk cannot hold the mirror fails before copying, like a failed preflight.
func TestMirrorDiskCheck(t *testing.T) {
	var buf bytes.Buffer
	err := mirrorDiskCheck(&buf, t.TempDir(), 1<<60)
	var fe *preflight.FailedError
	if !errors.As(err, &fe) || !strings.Contains(buf.String(), "FAIL") || !strings.Contains(buf.String(), "nothing was copied") {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	buf.Reset()
	if err := mirrorDiskCheck(&buf, t.TempDir(), 1); err != nil || !strings.Contains(buf.String(), "PASS") {
		t.Fatalf("%v\n%s", err, buf.String())
	}
}

// TestMirrorCommandSparseIndex: with --platform, the dry run says what the filter leaves out and
// what a refusing registry adds; the copy into distribution's default configuration (which refuses
// sparse indexes) succeeds with one warning, and a second run has nothing to say.
func TestMirrorCommandSparseIndex(t *testing.T) {
	logrus.SetOutput(io.Discard)
	src, dst, b := mirrortest.Pair(t, 4)
	var refs []string
	for _, repo := range []string{"app/one", "app/two"} {
		specs := []mirrortest.ImageSpec{{Layers: []mirrortest.Blob{b.Layer(2000)}}, {Layers: []mirrortest.Blob{b.Layer(3000)}, Platform: "linux/arm64"}}
		if _, err := b.Index(t.Context(), src.Host+"/"+repo, "v1", specs); err != nil {
			t.Fatal(err)
		}
		refs = append(refs, src.Host+"/"+repo+":v1")
	}
	dir := t.TempDir()
	isc := writeISC(t, dir, refs...)
	common := []string{"-c", isc, "--src-tls-verify=false", "--ca-file", dst.CAFile, "--authfile", dst.AuthFile, "--platform", "linux/amd64",
		"--workspace", "file://" + dir, "docker://" + dst.Host + "/mirror"}
	out, err := runMirrorCmd(t, append([]string{"--dry-run"}, common...)...)
	if err != nil || !strings.Contains(out, "2 platform image(s) of multi-arch indexes filtered out") || !strings.Contains(out, "they are copied too: 6.") {
		t.Fatalf("dry run: %v\n%s", err, out)
	}
	out, err = runMirrorCmd(t, common...)
	if err != nil || strings.Count(out, "WARNING: registry "+dst.Host+" refuses platform-filtered (sparse) indexes") != 1 {
		t.Fatalf("mirror: %v, want one sparse-index warning\n%s", err, out)
	}
	out, err = runMirrorCmd(t, common...)
	if err != nil || !strings.Contains(out, "2 already present") || strings.Contains(out, "WARNING: registry") {
		t.Fatalf("second run: %v\n%s", err, out)
	}
}

// sampleRefs pushes the sample images (layers of about layerKiB, shared, some multi-arch) to src.
func sampleRefs(t *testing.T, b *mirrortest.Builder, src *mirrortest.Registry, layerKiB int) []string {
	t.Helper()
	refs, err := b.Sample(t.Context(), src.Host, layerKiB)
	if err != nil {
		t.Fatal(err)
	}
	return refs
}

// writeISC writes dir/isc.yaml listing refs as additional images and returns its path.
func writeISC(t *testing.T, dir string, refs ...string) string {
	t.Helper()
	isc := filepath.Join(dir, "isc.yaml")
	doc := "apiVersion: mirror.openshift.io/v2alpha1\nkind: ImageSetConfiguration\nmirror:\n  additionalImages:\n"
	for _, r := range refs {
		doc += "  - name: " + r + "\n"
	}
	if err := os.WriteFile(isc, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return isc
}

// TestMirrorArchiveSizeRange: sizes that would overflow the byte count or fit no medium are
// refused up front, before anything is read or written (17179869184 GiB used to write nothing).
func TestMirrorArchiveSizeRange(t *testing.T) {
	dir := t.TempDir()
	isc := filepath.Join(dir, "isc.yaml")
	write(t, isc, []byte("apiVersion: mirror.openshift.io/v2alpha1\nkind: ImageSetConfiguration\nmirror:\n  additionalImages:\n  - name: 127.0.0.1:1/x:1\n"), 0o644)
	for _, size := range []string{"17179869184", "8589934592", "1025", "-1"} {
		code, out, errs := run(t, "mirror", "-c", isc, "--archive-size", size, "file://"+filepath.Join(dir, "out"))
		if code != exitFailure || !strings.Contains(errs, "from 1 to 1024") {
			t.Errorf("--archive-size %s: exit %d\n%s%s", size, code, out, errs)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "out")); err == nil {
		t.Error("a refused size still wrote the destination")
	}
}

// TestMirrorCommandFilteredCatalogSneakernet is the air-gapped workflow with a filtered operator
// catalog: to disk in archive parts on the connected side (the catalog filtered there, once, with
// targetCatalog and targetTag), a second run writing no new part, the parts alone carried to
// another directory and pushed with --from into the TLS + htpasswd registry; the CatalogSource,
// content.json and IDMS name the loaded catalog, --verify passes and the real opm serves it.
func TestMirrorCommandFilteredCatalogSneakernet(t *testing.T) {
	logrus.SetOutput(io.Discard)
	src, dst, b := mirrortest.Pair(t, 11)
	cat, err := b.Catalog(t.Context(), mirrortest.CatalogSpec{PushHost: src.Host, Repo: "redhat/redhat-operator-index", Tag: "v4.16", LayerKiB: 4,
		Packages: []mirrortest.PackageSpec{
			{Name: "alpha-op", DefaultChannel: "stable", Channels: map[string][]string{"stable": {"1.0.0", "1.1.0", "1.2.0"}, "fast": {"1.2.0", "1.3.0"}}, Deprecated: []string{"1.0.0"}},
			{Name: "beta-op", DefaultChannel: "v2", Channels: map[string][]string{"v1": {"1.0.0", "1.0.1"}, "v2": {"2.0.0", "2.1.0", "2.2.0"}}},
			{Name: "gamma-op", DefaultChannel: "stable", Channels: map[string][]string{"stable": {"0.1.0"}}},
		}})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	isc := filepath.Join(dir, "isc.yaml")
	write(t, isc, []byte(`apiVersion: mirror.openshift.io/v2alpha1
kind: ImageSetConfiguration
mirror:
  operators:
  - catalog: `+cat.Image+`
    targetCatalog: site/operator-index
    targetTag: v4.16-filtered
    packages:
    - name: alpha-op
      channels:
      - name: stable
        minVersion: 1.1.0
    - name: beta-op
      minVersion: 2.1.0
`), 0o644)
	archive := filepath.Join(dir, "archive")
	toDir := []string{"-c", isc, "--src-tls-verify=false", "--archive-size-bytes", "65536", "file://" + archive}
	out, err := runMirrorCmd(t, toDir...)
	// alpha-op stable 1.1.0 1.2.0, beta-op v2 2.1.0 2.2.0 (v1 emptied by the range): 4 bundles, 4 operators
	if err != nil || !strings.Contains(out, "mirrored 8 images") || !strings.Contains(out, "new part(s)") {
		t.Fatalf("to dir: %v\n%s", err, out)
	}
	c, err := mirror.ReadContent(mirror.ArchiveContent(archive))
	if err != nil {
		t.Fatal(err)
	}
	var catImage mirror.ImageResult
	for _, im := range c.Images {
		if im.Kind == mirror.KindCatalog {
			catImage = im
		}
	}
	if len(c.Catalogs) != 1 || c.Catalogs[0].Name != "cs-operator-index-v4-16-filter" || len(c.Catalogs[0].Advertised) != 8 ||
		catImage.Dest != mirror.ArchiveHost+"/site/operator-index:v4.16-filtered" || catImage.Digest == cat.Digest {
		t.Fatalf("disk content: catalogs %+v, catalog image %+v; want the filtered catalog (not the source %s) under its target name", c.Catalogs, catImage, cat.Digest)
	}
	if out, err := runMirrorCmd(t, toDir...); err != nil || !strings.Contains(out, "nothing new") {
		t.Fatalf("to dir again: the filtered catalog must be rebuilt identically, no new part: %v\n%s", err, out)
	}
	parts, _ := filepath.Glob(filepath.Join(archive, "mirror_*.tar"))
	far := t.TempDir()
	for _, p := range append(parts, filepath.Join(archive, "archive.json")) {
		write(t, filepath.Join(far, filepath.Base(p)), []byte(readFile(t, p)), 0o644)
	}
	ws := filepath.Join(dir, "ws")
	fromDir := []string{"-c", isc, "--from", "file://" + far, "--ca-file", dst.CAFile, "--authfile", dst.AuthFile, "--workspace", "file://" + ws, "docker://" + dst.Host + "/mirror"}
	if out, err := runMirrorCmd(t, fromDir...); err != nil || !strings.Contains(out, "mirrored 9 images (0 already present, 0 failed)") ||
		!strings.Contains(out, "cs-operator-index-v4-16-filter.yaml") {
		t.Fatalf("from the parts: %v\n%s", err, out)
	}
	res := filepath.Join(ws, "working-dir", "cluster-resources")
	loaded := dst.Host + "/mirror/site/operator-index@" + catImage.Digest
	if cs := readFile(t, filepath.Join(res, "cs-operator-index-v4-16-filter.yaml")); !strings.Contains(cs, "image: "+loaded) {
		t.Errorf("CatalogSource does not name the loaded filtered catalog %s:\n%s", loaded, cs)
	}
	// the loaded catalog's configs, read back from the registry, for upgrade plan's gate
	fbc := filepath.Join(res, "catalogs", "4.16", "cs-operator-index-v4-16-filter")
	if a := readFile(t, filepath.Join(fbc, "alpha-op", "catalog.json")); !strings.Contains(a, `"name": "alpha-op.v1.2.0"`) || strings.Contains(a, `"name": "alpha-op.v1.0.0"`) {
		t.Errorf("catalogs/4.16 alpha-op is not the filtered catalog:\n%s", a)
	}
	if _, err := os.Stat(filepath.Join(fbc, "gamma-op")); err == nil {
		t.Error("catalogs/4.16 holds gamma-op, which the filter left out")
	}
	if idms := readFile(t, filepath.Join(res, "idms-oc-mirror.yaml")); !strings.Contains(idms, src.Host+"/operators/alpha-op-bundle") || !strings.Contains(idms, dst.Host+"/mirror/operators/alpha-op-bundle") {
		t.Errorf("idms-oc-mirror.yaml lacks the bundle mirror:\n%s", idms)
	}
	if out, err := runMirrorCmd(t, "-c", isc, "--verify", "--ca-file", dst.CAFile, "--authfile", dst.AuthFile, "--workspace", "file://"+ws, "docker://"+dst.Host+"/mirror"); err != nil {
		t.Fatalf("verify: %v\n%s", err, out)
	}
	rc := regclient.New(regclient.WithConfigHost(config.Host{Name: dst.Host, RegCert: readFile(t, dst.CAFile), User: "robot", Pass: "pw"}))
	r, _ := ref.New(dst.Host + "/mirror/site/operator-index:v4.16-filtered")
	if m, err := rc.ManifestHead(t.Context(), r); err != nil || m.GetDescriptor().Digest.String() != catImage.Digest {
		t.Fatalf("the target tag does not name the filtered catalog: %v", err)
	}
	if opm := mirrortest.OPM(); opm != "" {
		configs := filepath.Join(t.TempDir(), "configs")
		if n, err := mirrortest.TopLayerFiles(t.Context(), rc, loaded, "configs/", configs); err != nil || n != 2 {
			t.Fatalf("extract the loaded catalog: %d files, %v", n, err)
		}
		mirrortest.Serves(t, opm, configs)
	}
}
