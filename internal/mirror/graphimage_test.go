package mirror

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/regclient/regclient"
	"github.com/regclient/regclient/config"
	"github.com/regclient/regclient/types/manifest"
	"github.com/regclient/regclient/types/ref"

	"github.com/bootstrap-dev/bootstrap/internal/mirror/mirrortest"
)

// graphDataTarball builds a tarball in the update service's graph-data layout.
func graphDataTarball(t *testing.T, extra ...tar.Header) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	tw := tar.NewWriter(zw)
	files := []struct{ name, body string }{
		{"./", ""},
		{"./version", "1.2.0\n"},
		{"./channels/stable-4.18.yaml", "name: stable-4.18\nversions:\n- 4.18.2\n"},
		{"./blocked-edges/4.18.2-Regression.yaml", "to: 4.18.2\nfrom: 4[.]17[.].*\nurl: https://issues.example.com/R\nname: Regression\nmessage: m\n"},
		{"./raw/metadata.json", "{}"},
	}
	for _, f := range files {
		h := &tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.body)), Typeflag: tar.TypeReg}
		if strings.HasSuffix(f.name, "/") {
			h.Typeflag, h.Mode = tar.TypeDir, 0o755
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		_, _ = tw.Write([]byte(f.body))
	}
	for _, h := range extra {
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		_, _ = tw.Write(make([]byte, h.Size))
	}
	_ = tw.Close()
	_ = zw.Close()
	return b.Bytes()
}

func TestReadGraphDataRefusesHostileTarballs(t *testing.T) {
	if fs, err := ReadGraphData(bytes.NewReader(graphDataTarball(t))); err != nil || len(fs) != 4 || string(fs["version"]) != "1.2.0\n" {
		t.Fatalf("files %v, %v", fs, err)
	}
	for name, h := range map[string]tar.Header{
		"escape":  {Name: "../../etc/x", Typeflag: tar.TypeReg, Size: 1},
		"abs":     {Name: "/etc/x", Typeflag: tar.TypeReg, Size: 1},
		"symlink": {Name: "channels/l.yaml", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"},
		"dup":     {Name: "version", Typeflag: tar.TypeReg, Size: 1},
		"huge":    {Name: "raw/big", Typeflag: tar.TypeReg, Size: maxGraphDataBytes + 1},
	} {
		if _, err := ReadGraphData(bytes.NewReader(graphDataTarball(t, h))); err == nil {
			t.Errorf("%s: read", name)
		}
	}
	if _, err := ReadGraphData(strings.NewReader("not gzip")); err == nil {
		t.Error("not gzip: read")
	}
}

// graph: true through the disk workflow: the connected run builds the graph-data image on the
// (stand-in) UBI base into the disk mirror and carries the planned graph-data files; the
// disconnected run pushes the image like any content and writes the UpdateService naming it by
// digest, with the mirrored release repository, as oc-mirror v2 shapes it.
func TestGraphTrueBuildsGraphImageAndUpdateService(t *testing.T) {
	e := newEnv(t, nil)
	if _, err := e.b.Release(ctx(t), mirrortest.ReleaseSpec{PushHost: e.src.Host, NameHost: "quay.io", Version: "4.18.2", Components: 2, LayerKiB: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.b.Image(ctx(t), e.src.Host+"/ubi9/ubi", "latest", mirrortest.ImageSpec{Layers: []mirrortest.Blob{e.b.Layer(2048)}, Cmd: []string{"/bin/bash"}}); err != nil {
		t.Fatal(err)
	}
	tarball := graphDataTarball(t)
	us := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/upgrades_info/graph-data" {
			_, _ = w.Write(tarball)
			return
		}
		_, _ = w.Write([]byte(oneGraph))
	}))
	defer us.Close()
	isc := &ImageSetConfig{APIVersion: ISCAPIVersion, Kind: ISCKind, Mirror: ISCMirror{Platform: ISCPlatform{Graph: true, Channels: []ISCChannel{{Name: "stable-4.18"}}}}}
	if err := isc.Validate(); err != nil {
		t.Fatalf("graph: true refused: %v", err)
	}
	disk := t.TempDir()
	o := DefaultOptions(Dest{Dir: disk})
	o.Source = Endpoint{Insecure: true}
	o.SourceRegistry = e.src.Host
	job := Job{ISC: isc, HTTP: us.Client(), UpdateURL: us.URL + "/api/upgrades_info/v1/graph", GraphDataURL: us.URL + "/api/upgrades_info/graph-data"}
	l, err := Load(ctx(t), job, &o)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := l.Run(ctx(t), o)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, g := range rep.Content.Graph {
		paths = append(paths, g.Path)
	}
	if got := strings.Join(paths, " "); got != "cincinnati/stable-4.18-amd64.json graph-data/blocked-edges/4.18.2-Regression.yaml graph-data/channels/stable-4.18.yaml graph-data/version" {
		t.Fatalf("graph entries %s", got)
	}

	out := t.TempDir()
	o2 := e.opts()
	o2.Dest.Namespace = "ocp"
	l2, err := Load(ctx(t), Job{FromDir: disk, OutDir: out}, &o2)
	if err != nil {
		t.Fatal(err)
	}
	rep2, err := l2.Run(ctx(t), o2)
	if err != nil {
		t.Fatal(err)
	}
	var graphImage string
	for _, im := range rep2.Content.Images {
		if im.Kind == KindGraph {
			graphImage = repoOnly(im.Dest) + "@" + im.Digest
		}
	}
	if graphImage == "" || !strings.HasPrefix(graphImage, e.dst.Host+"/ocp/openshift/graph-image@sha256:") || rep2.UpdateService != UpdateServiceFile {
		t.Fatalf("graph image %q, UpdateService %q", graphImage, rep2.UpdateService)
	}
	usb, _ := os.ReadFile(filepath.Join(out, UpdateServiceFile))
	want := "apiVersion: updateservice.operator.openshift.io/v1\nkind: UpdateService\nmetadata:\n  name: update-service-oc-mirror\n  namespace: openshift-update-service\n" +
		"spec:\n  graphDataImage: " + graphImage + "\n  releases: " + e.dst.Host + "/ocp/openshift-release-dev/ocp-release\n  replicas: 2\n"
	if string(usb) != want {
		t.Fatalf("updateService.yaml:\n%s\nwant:\n%s", usb, want)
	}
	if idms, _ := os.ReadFile(filepath.Join(out, "idms.yaml")); strings.Contains(string(idms), "graph-image") {
		t.Fatalf("the graph image is in a mirror set:\n%s", idms)
	}
	if b, err := os.ReadFile(filepath.Join(out, "graph-data", "version")); err != nil || string(b) != "1.2.0\n" {
		t.Fatalf("carried graph-data version %q, %v", b, err)
	}

	// the pushed image: the base's layer, then the graph-data under /var/lib/cincinnati-graph-data,
	// and the command copying it where the update service reads it
	ca, _ := os.ReadFile(e.dst.CAFile)
	rc := regclient.New(regclient.WithConfigHost(config.Host{Name: e.dst.Host, RegCert: string(ca), User: "robot", Pass: "s3cret"}))
	r, _ := ref.New(graphImage)
	m, err := rc.ManifestGet(ctx(t), r)
	if err != nil {
		t.Fatal(err)
	}
	img := m.(manifest.Imager)
	layers, _ := img.GetLayers()
	if len(layers) != 2 {
		t.Fatalf("%d layers, want the base's and the graph-data", len(layers))
	}
	br, err := rc.BlobGet(ctx(t), r, layers[1])
	if err != nil {
		t.Fatal(err)
	}
	defer br.Close()
	zr, err := gzip.NewReader(br)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
	}
	if !strings.Contains(strings.Join(names, " "), "var/lib/cincinnati-graph-data/raw/metadata.json var/lib/cincinnati-graph-data/version") {
		t.Fatalf("graph-data layer holds %v", names)
	}
	cd, _ := img.GetConfig()
	cb, err := rc.BlobGet(ctx(t), r, cd)
	if err != nil {
		t.Fatal(err)
	}
	defer cb.Close()
	cfg, _ := io.ReadAll(cb)
	if !strings.Contains(string(cfg), `"Cmd":["/bin/bash","-c","exec cp -rp /var/lib/cincinnati-graph-data/* /var/lib/cincinnati/graph-data"]`) {
		t.Fatalf("config %s", cfg)
	}
}

// One --update-url names the graph-data too: beside the graph endpoint, as api.openshift.com
// lays them out; an explicit URL wins; anything else falls back to the public one.
func TestGraphDataURLFor(t *testing.T) {
	for _, tc := range [][3]string{
		{"http://127.0.0.1:9/api/upgrades_info/v1/graph", "", "http://127.0.0.1:9/api/upgrades_info/graph-data"},
		{DefaultUpdateURL, "", DefaultGraphDataURL},
		{"http://osus.example/api/upgrades_info/v1/graph", "http://files.example/gd.tgz", "http://files.example/gd.tgz"},
		{"http://osus.example/graph", "", DefaultGraphDataURL},
		{"", "", DefaultGraphDataURL},
	} {
		if got := GraphDataURLFor(tc[0], tc[1]); got != tc[2] {
			t.Errorf("GraphDataURLFor(%q, %q) = %q, want %q", tc[0], tc[1], got, tc[2])
		}
	}
}
