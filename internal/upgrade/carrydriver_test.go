package upgrade_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"

	"github.com/bootstrap-dev/bootstrap/internal/mirror"
	"github.com/bootstrap-dev/bootstrap/internal/mirror/mirrortest"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade/upgradetest"
)

// tarGraphData packs dir/graph-data as the update service's graph-data tarball (files at the root).
func tarGraphData(t *testing.T, dir string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	tw := tar.NewWriter(zw)
	root := filepath.Join(dir, "graph-data")
	err := filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		body, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Name: "./" + filepath.ToSlash(rel), Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		_, err = tw.Write(body)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	_ = tw.Close()
	_ = zw.Close()
	return b.Bytes()
}

// The whole path with the mirror driver: an ISC with graph: true and the standard fixture's
// channels, mirrored to file://DIR from a loopback update service (graphs and graph-data
// tarball) and source registry, then --from file://DIR into the registry; upgrade plan reads the
// outputs directory: the graph verified against content.json, the graph-data's blocked edge
// removing 4.17.20 -> 4.18.30 and its channels giving the EUS path.
func TestPlanFromGraphCarriedByTheMirrorDriver(t *testing.T) {
	logrus.SetOutput(io.Discard) // the registries' access log
	ctx := t.Context()
	served := upgradetest.Standard(t, false)
	srv := updateService(t, served.Path)
	tarball := tarGraphData(t, served.Path)
	mux := http.NewServeMux()
	mux.Handle("/api/upgrades_info/v1/graph", srv.Config.Handler)
	mux.HandleFunc("/api/upgrades_info/graph-data", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(tarball) })
	srv.Config.Handler = mux

	src, dst, b := mirrortest.Pair(t, 33)
	for _, v := range []string{"4.16.30", "4.17.20", "4.18.30", "4.19.5"} {
		if _, err := b.Release(ctx, mirrortest.ReleaseSpec{PushHost: src.Host, NameHost: "quay.io", Version: v, Components: 1, LayerKiB: 1}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.Image(ctx, src.Host+"/ubi9/ubi", "latest", mirrortest.ImageSpec{Layers: []mirrortest.Blob{b.Layer(1024)}}); err != nil {
		t.Fatal(err)
	}
	iscPath := filepath.Join(t.TempDir(), "isc.yaml")
	doc := "apiVersion: mirror.openshift.io/v2alpha1\nkind: ImageSetConfiguration\nmirror:\n  platform:\n    graph: true\n    channels:\n" +
		"    - name: stable-4.16\n    - name: stable-4.17\n    - name: stable-4.18\n    - name: eus-4.18\n    - name: stable-4.19\n"
	if err := os.WriteFile(iscPath, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	isc, err := mirror.LoadISC(iscPath)
	if err != nil {
		t.Fatal(err)
	}

	disk := t.TempDir()
	o := mirror.DefaultOptions(mirror.Dest{Dir: disk})
	o.Source = mirror.Endpoint{Insecure: true}
	o.SourceRegistry = src.Host
	l, err := mirror.Load(ctx, mirror.Job{ISC: isc, HTTP: srv.Client(),
		UpdateURL: srv.URL + "/api/upgrades_info/v1/graph", GraphDataURL: srv.URL + "/api/upgrades_info/graph-data"}, &o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Run(ctx, o); err != nil {
		t.Fatal(err)
	}

	out := t.TempDir()
	o2 := mirror.DefaultOptions(mirror.Dest{Host: dst.Host, Namespace: "ocp", CAFile: dst.CAFile, AuthFile: dst.AuthFile})
	l2, err := mirror.Load(ctx, mirror.Job{FromDir: disk, OutDir: out}, &o2)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := l2.Run(ctx, o2)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Content.Graph) != 10 || rep.UpdateService == "" {
		t.Fatalf("carried %d graph files, UpdateService %q", len(rep.Content.Graph), rep.UpdateService)
	}

	c, err := upgrade.Load(out, "amd64")
	if err != nil {
		t.Fatal(err)
	}
	if !c.Verified || c.Data == nil || len(c.Data.Blocked) != 2 || len(c.Graphs) != 5 {
		t.Fatalf("carried: verified %v, data %+v, %d graphs", c.Verified, c.Data, len(c.Graphs))
	}
	p, err := upgrade.Compute(c, state(t, upgradetest.StateOptions{Version: "4.17.10"}), upgrade.Options{To: "4.18.30", AllowMissing: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := hops(p); got != "4.17.10 -> 4.17.20 -> 4.18.24 -> 4.18.30" {
		t.Fatalf("path %s", got)
	}
	if !p.Graph.Verified || len(p.Graph.RemovedEdges) != 1 || !strings.Contains(p.Graph.RemovedEdges[0], "graph-data/blocked-edges/4.18.30-Regression.yaml") {
		t.Fatalf("graph %+v", p.Graph)
	}
	// the releases the mirror carried are named by content.json: 4.17.20 was mirrored
	if p.Hops[0].To != "4.17.20" {
		t.Fatalf("hop %+v", p.Hops[0])
	}
}
