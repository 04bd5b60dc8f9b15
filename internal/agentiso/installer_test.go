package agentiso

import (
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/regclient/regclient"
	"github.com/regclient/regclient/config"
	"github.com/sirupsen/logrus"

	"github.com/bootstrap-dev/bootstrap/internal/mirror"
	"github.com/bootstrap-dev/bootstrap/internal/mirror/mirrortest"
)

// quayLab is an in-process registry with TLS and htpasswd standing in for the site's Quay, holding
// a synthetic release payload pushed under its public names' paths.
type quayLab struct {
	reg      *mirrortest.Registry
	requests atomic.Int64
	b        *mirrortest.Builder
	opts     mirror.Options
	sources  []ImageDigestSource
}

func startQuay(t testing.TB) *quayLab {
	t.Helper()
	logrus.SetOutput(io.Discard) // distribution logs every request through logrus
	q := &quayLab{}
	reg, err := mirrortest.StartRegistry(mirrortest.RegistryOptions{Dir: t.TempDir(), TLS: true, User: "robot", Password: "s3cret",
		Wrap: func(h http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { q.requests.Add(1); h.ServeHTTP(w, r) })
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(reg.Close)
	q.reg = reg
	ca, err := os.ReadFile(reg.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	rc := regclient.New(regclient.WithConfigHost(config.Host{Name: reg.Host, TLS: config.TLSEnabled, RegCert: string(ca), User: "robot", Pass: "s3cret"}))
	q.b = mirrortest.NewBuilder(rc, 16)
	q.opts = mirror.DefaultOptions(mirror.Dest{})
	q.opts.Source = mirror.Endpoint{Host: reg.Host, CAFile: reg.CAFile, AuthFile: reg.AuthFile}
	for _, repo := range []string{"openshift-release-dev/ocp-release", "openshift-release-dev/ocp-v4.0-art-dev"} {
		q.sources = append(q.sources, ImageDigestSource{Source: "quay.io/" + repo, Mirrors: []string{reg.Host + "/ocp/" + repo}})
	}
	return q
}

// release pushes a payload whose installer component carries bin; it returns the release image
// in the mirror by digest. The payload names its images quay.io/...; they are pushed under ocp/.
func (q *quayLab) release(t testing.TB, version string, bin []byte) string {
	t.Helper()
	rel, err := q.b.Release(t.Context(), mirrortest.ReleaseSpec{PushHost: q.reg.Host + "/ocp", NameHost: "quay.io", Version: version,
		Components: 3, LayerKiB: 16, Installer: bin})
	if err != nil {
		t.Fatal(err)
	}
	return q.reg.Host + "/ocp/openshift-release-dev/ocp-release@" + rel.Digest
}

func TestExtractInstallerFromMirroredRelease(t *testing.T) {
	q := startQuay(t)
	double, err := os.ReadFile(installerDouble(t))
	if err != nil {
		t.Fatal(err)
	}
	relImage := q.release(t, "4.18.0", double)
	cache := t.TempDir()
	o := ExtractOptions{ReleaseImage: relImage, Sources: q.sources, Registry: q.opts, CacheDir: cache}
	info, err := ExtractInstaller(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	if info.Source != FromRelease || info.Component != "installer" || info.Release != "4.18.0" || info.Cached ||
		info.LayersRead != 1 || info.BytesRead == 0 || !strings.HasPrefix(info.Image, q.reg.Host+"/ocp/openshift-release-dev/ocp-v4.0-art-dev@sha256:") {
		t.Errorf("info %+v", info)
	}
	if want := []string{markerArch, markerImage, markerVersion}; !reflect.DeepEqual(info.Stamped, want) {
		t.Errorf("stamped %v, want %v", info.Stamped, want)
	}
	sum, size, err := sha256File(info.Path)
	if err != nil || sum != info.SHA256 || size != int64(len(double)) {
		t.Errorf("binary on disk: sha256 %s size %d (%v), recorded %s, double is %d bytes", sum, size, err, info.SHA256, len(double))
	}
	// the extracted, stamped binary reports the mirrored release, as oc-extracted installers do
	out, err := exec.Command(info.Path, "version").CombinedOutput()
	if err != nil {
		t.Fatalf("%s version: %v: %s", info.Path, err, out)
	}
	if v, _ := InstallerVersion(string(out)); v != "4.18.0" || InstallerReleaseImage(string(out)) != relImage ||
		!strings.Contains(string(out), "release architecture amd64") {
		t.Errorf("version output %q: want 4.18.0, %s, amd64", out, relImage)
	}

	// second run: from the cache, nothing read from the registry
	before := q.requests.Load()
	again, err := ExtractInstaller(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	if n := q.requests.Load() - before; n != 0 || !again.Cached || again.Path != info.Path || again.SHA256 != info.SHA256 {
		t.Errorf("second run: %d registry requests, %+v", n, again)
	}

	// a cached binary that changed is extracted again
	if err := os.WriteFile(info.Path, []byte("tampered"), 0o755); err != nil {
		t.Fatal(err)
	}
	third, err := ExtractInstaller(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	if third.Cached || third.SHA256 != info.SHA256 || q.requests.Load() == before {
		t.Errorf("tampered cache not re-extracted: %+v", third)
	}

	// Build takes it: the version matches, the release digest matches
	res, err := Build(context.Background(), BuildOptions{WorkDir: t.TempDir(), Rendered: renderProfile(t, "lab"), Installer: third.Path,
		ReleaseVersion: "4.18.0", ReleaseImage: relImage, Info: third})
	if err != nil {
		t.Fatal(err)
	}
	if res.InstallerVersion != "4.18.0" || res.Installer == nil || res.Installer.SHA256 != info.SHA256 {
		t.Errorf("build result %+v", res)
	}
	// and refuses it for another release: another version, or another payload of the same version
	_, err = Build(context.Background(), BuildOptions{WorkDir: t.TempDir(), Rendered: renderProfile(t, "lab"), Installer: third.Path,
		ReleaseVersion: "4.18.1", ReleaseImage: relImage})
	if err == nil || !strings.Contains(err.Error(), "openshift-install is version 4.18.0 but cluster.release.version is 4.18.1") {
		t.Errorf("version mismatch: %v", err)
	}
	other := q.reg.Host + "/ocp/openshift-release-dev/ocp-release@sha256:" + strings.Repeat("ab", 32)
	_, err = Build(context.Background(), BuildOptions{WorkDir: t.TempDir(), Rendered: renderProfile(t, "lab"), Installer: third.Path,
		ReleaseVersion: "4.18.0", ReleaseImage: other})
	if err == nil || !strings.Contains(err.Error(), "openshift-install was made for release image "+relImage) {
		t.Errorf("release digest mismatch: %v", err)
	}
}

// Payloads without an installer component carry openshift-install in baremetal-installer.
func TestExtractInstallerBaremetalFallback(t *testing.T) {
	q := startQuay(t)
	rel, err := q.b.Release(t.Context(), mirrortest.ReleaseSpec{PushHost: q.reg.Host + "/ocp", NameHost: "quay.io", Version: "4.15.9",
		Components: 2, LayerKiB: 8, Installer: []byte("baremetal installer bytes"), InstallerTag: "baremetal-installer"})
	if err != nil {
		t.Fatal(err)
	}
	info, err := ExtractInstaller(t.Context(), ExtractOptions{ReleaseImage: q.reg.Host + "/ocp/openshift-release-dev/ocp-release@" + rel.Digest,
		Sources: q.sources, Registry: q.opts, CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(info.Path)
	if info.Component != "baremetal-installer" || string(got) != "baremetal installer bytes" || len(info.Stamped) != 0 {
		t.Errorf("info %+v, binary %q", info, got)
	}
}

func TestExtractInstallerErrors(t *testing.T) {
	q := startQuay(t)
	noInstaller := q.release(t, "4.18.0", nil)
	cases := map[string]struct {
		o    ExtractOptions
		want string
	}{
		"release by tag": {ExtractOptions{ReleaseImage: q.reg.Host + "/ocp/openshift-release-dev/ocp-release:4.18.0-x86_64"}, "is not by digest"},
		"no installer":   {ExtractOptions{ReleaseImage: noInstaller, Sources: q.sources}, "lists no installer or baremetal-installer component"},
		"no idms for it": {ExtractOptions{ReleaseImage: q.release(t, "4.18.0", []byte("bin")), Sources: q.sources[:1]}, "has no mirror in the mirror stage's idms-oc-mirror.yaml"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			c.o.Registry, c.o.CacheDir = q.opts, t.TempDir()
			_, err := ExtractInstaller(t.Context(), c.o)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want %q", err, c.want)
			}
		})
	}
}

// Stamping writes each value over the first complete placeholder only, and refuses values longer
// than the placeholder.
func TestStampRelease(t *testing.T) {
	pad := func(name string, n int) string {
		return string(markerPrefix(name)) + strings.Repeat("X", n) + "\x00"
	}
	content := "head" + string(markerPrefix(markerVersion)) + "XXXX\x00" + // too little padding: not a placeholder
		pad(markerVersion, 64) + "middle" + pad(markerVersion, 64) + strings.Repeat("z", 5<<20) + pad(markerImage, 300) + "tail"
	p := filepath.Join(t.TempDir(), "bin")
	if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := stampRelease(f, map[string]string{markerVersion: "4.18.0", markerImage: "mirror/ocp@sha256:00", markerArch: "linux/amd64"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{markerImage, markerVersion}; !reflect.DeepEqual(got, want) {
		t.Errorf("stamped %v, want %v (no architecture placeholder in this binary)", got, want)
	}
	data, _ := os.ReadFile(p)
	first := strings.Index(content, pad(markerVersion, 64))
	wantV := "4.18.0\x00" + pad(markerVersion, 64)[7:]
	if string(data[first:first+len(wantV)]) != wantV {
		t.Errorf("first version placeholder: %q", data[first:first+len(wantV)])
	}
	if !strings.Contains(string(data), "middle"+pad(markerVersion, 64)) {
		t.Error("second version placeholder changed")
	}
	if !strings.Contains(string(data), "mirror/ocp@sha256:00\x00") || len(data) != len(content) {
		t.Error("image placeholder (past the first 4 MiB chunk) not stamped, or the size changed")
	}
	long := filepath.Join(t.TempDir(), "bin")
	if err := os.WriteFile(long, []byte(pad(markerImage, 300)), 0o755); err != nil {
		t.Fatal(err)
	}
	g, err := os.OpenFile(long, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if _, err := stampRelease(g, map[string]string{markerImage: strings.Repeat("r", 400)}); err == nil || !strings.Contains(err.Error(), "the placeholder holds 326") {
		t.Errorf("a value longer than its placeholder: %v", err)
	}
}

// BenchmarkExtractInstaller extracts a 64 MiB openshift-install (placeholders near its end, as in
// a Go binary's rodata) from an in-process TLS registry: download, gunzip, stamp, SHA-256.
func BenchmarkExtractInstaller(b *testing.B) {
	q := startQuay(b)
	bin := make([]byte, 64<<20)
	r := rand.New(rand.NewPCG(1, 2)) //#nosec G404 -- test content
	for i := range bin {
		bin[i] = byte(r.Uint32() & 0x0f) // 4 bits of entropy a byte: gzip gets ~2x, near a Go binary's ~2.5x
	}
	tail := string(markerPrefix(markerVersion)) + strings.Repeat("X", 64) + "\x00" + string(markerPrefix(markerImage)) + strings.Repeat("X", 300) + "\x00"
	copy(bin[len(bin)-8<<20:], tail)
	rel := q.release(b, "4.18.0", bin)
	b.SetBytes(int64(len(bin)))
	b.ResetTimer()
	var info *InstallerInfo
	for b.Loop() {
		var err error
		info, err = ExtractInstaller(b.Context(), ExtractOptions{ReleaseImage: rel, Sources: q.sources, Registry: q.opts, CacheDir: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(info.BytesRead), "registry-bytes/op")
}
