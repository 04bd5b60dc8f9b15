package mirror

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/mirror/mirrortest"
)

const oneGraph = `{"nodes":[{"version":"4.18.1","payload":"quay.io/openshift-release-dev/ocp-release@sha256:aa","metadata":{}},` +
	`{"version":"4.18.2","payload":"quay.io/openshift-release-dev/ocp-release@sha256:bb"}],"edges":[[0,1]],` +
	`"conditionalEdges":[{"edges":[{"from":"4.18.1","to":"4.18.2"}],"risks":[{"url":"https://x.test/r","name":"R","message":"m","matchingRules":[{"type":"Always"}]}]}]}`

// Hostile update services: each answer is refused by name before anything is written.
func TestFetchGraphsRefusesHostileAnswers(t *testing.T) {
	isc := &ImageSetConfig{Mirror: ISCMirror{Platform: ISCPlatform{Channels: []ISCChannel{{Name: "stable-4.18"}}, Architectures: []string{"arm64"}}}}
	for name, tc := range map[string]struct {
		status int
		body   []byte
		want   string
	}{
		"good":          {200, []byte(oneGraph), ""},
		"unknown field": {200, []byte(strings.Replace(oneGraph, `"edges":[[0,1]]`, `"edges":[[0,1]],"extra":1`, 1)), `unknown field "extra"`},
		"trailing":      {200, []byte(oneGraph + `{}`), "data after the JSON document"},
		"edge range":    {200, []byte(strings.Replace(oneGraph, `[[0,1]]`, `[[0,7]]`, 1)), "outside the 2 nodes"},
		"no nodes":      {200, []byte(`{"nodes":[],"edges":[]}`), "no nodes"},
		"truncated":     {200, []byte(oneGraph[:len(oneGraph)/2]), "not an update graph"},
		"too large":     {200, bytes.Repeat([]byte(" "), MaxGraphBytes+1), "larger than any real answer"},
		"status":        {503, nil, "503"},
	} {
		t.Run(name, func(t *testing.T) {
			var asked string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				asked = r.URL.RawQuery
				w.WriteHeader(tc.status)
				_, _ = w.Write(tc.body)
			}))
			defer srv.Close()
			dir := t.TempDir()
			es, err := FetchGraphs(context.Background(), srv.Client(), srv.URL+"/graph", isc, dir)
			if asked != "arch=arm64&channel=stable-4.18" {
				t.Fatalf("query %q", asked)
			}
			if tc.want == "" {
				if err != nil || len(es) != 1 || es[0].Path != "cincinnati/stable-4.18-arm64.json" || es[0].Size != int64(len(oneGraph)) {
					t.Fatalf("entries %+v, %v", es, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want an error with %q, got %v", tc.want, err)
			}
			if _, err := os.Stat(filepath.Join(dir, GraphDir)); !os.IsNotExist(err) {
				t.Fatalf("a refused graph was written: %v", err)
			}
		})
	}
}

// A content.json naming graph files outside the graph directories, or sizes no graph has, is
// refused before anything is read or written.
func TestCarryGraphRefusesHostileEntries(t *testing.T) {
	from, to := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(from, "secret"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, e := range []GraphEntry{
		{Path: "../secret", Size: 1}, {Path: "/etc/passwd", Size: 1}, {Path: "cincinnati/../secret", Size: 1},
		{Path: "cincinnati/evil-amd64.json", Size: 1}, {Path: "graph-data/../../x", Size: 1},
		{Path: "cincinnati/stable-4.18-amd64.json", Size: MaxGraphBytes + 1},
	} {
		if _, err := CarryGraph(from, to, []GraphEntry{e}); err == nil {
			t.Errorf("%+v carried", e)
		}
	}
	if es, _ := os.ReadDir(to); len(es) != 0 {
		t.Fatalf("wrote %v", es)
	}
}

// The disk workflow carries the graph like any content: the connected run (file://DIR) fetches
// it beside the releases and lists it in content.json; the disconnected run (--from) hashes it
// again and writes it with the registry outputs; a graph file altered on the way stops that run.
func TestDiskWorkflowCarriesGraph(t *testing.T) {
	for _, archive := range []int64{0, 64 << 10} {
		t.Run(fmt.Sprintf("archive%d", archive), func(t *testing.T) { testDiskWorkflowCarriesGraph(t, archive) })
	}
}

func testDiskWorkflowCarriesGraph(t *testing.T, archive int64) {
	e := newEnv(t, nil)
	if _, err := e.b.Release(ctx(t), mirrortest.ReleaseSpec{PushHost: e.src.Host, NameHost: "quay.io", Version: "4.18.2", Components: 2, LayerKiB: 1}); err != nil {
		t.Fatal(err)
	}
	var asked []string
	us := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked = append(asked, r.URL.Query().Get("channel")+" "+r.URL.Query().Get("arch"))
		_, _ = w.Write([]byte(oneGraph))
	}))
	defer us.Close()
	isc := &ImageSetConfig{APIVersion: ISCAPIVersion, Kind: ISCKind, Mirror: ISCMirror{Platform: ISCPlatform{Channels: []ISCChannel{{Name: "stable-4.18"}}}}}

	disk := t.TempDir()
	o := DefaultOptions(Dest{Dir: disk})
	o.Source = Endpoint{Insecure: true}
	o.SourceRegistry = e.src.Host
	l, err := Load(ctx(t), Job{ISC: isc, ArchiveBytes: archive, UpdateURL: us.URL + "/api/upgrades_info/v1/graph", HTTP: us.Client()}, &o)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := l.Run(ctx(t), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(asked) != 1 || asked[0] != "stable-4.18 amd64" || len(rep.Content.Graph) != 1 {
		t.Fatalf("asked %v, graph %+v", asked, rep.Content.Graph)
	}
	contentFile, graphFile := filepath.Join(disk, "content.json"), filepath.Join(disk, "cincinnati", "stable-4.18-amd64.json")
	if archive > 0 {
		contentFile, graphFile = ArchiveContent(disk), filepath.Join(disk, "working-dir", "cincinnati", "stable-4.18-amd64.json")
		if len(rep.Parts) == 0 {
			t.Fatal("no archive part written")
		}
	}
	c, err := ReadContent(contentFile)
	if err != nil || len(c.Graph) != 1 || c.Graph[0] != rep.Content.Graph[0] || len(c.Images) != 3 {
		t.Fatalf("content.json %+v, %v", c, err)
	}

	from := func(t *testing.T) (string, error) {
		out := t.TempDir()
		o := e.opts()
		o.Dest.Namespace = "ocp"
		l, err := Load(ctx(t), Job{FromDir: disk, OutDir: out}, &o)
		if err != nil {
			return out, err
		}
		_, err = l.Run(ctx(t), o)
		return out, err
	}
	out, err := from(t)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(out, "cincinnati", "stable-4.18-amd64.json"))
	if err != nil || string(got) != oneGraph {
		t.Fatalf("carried graph %q, %v", got, err)
	}
	oc, err := ReadContent(filepath.Join(out, "content.json"))
	if err != nil || len(oc.Graph) != 1 || oc.Graph[0] != c.Graph[0] {
		t.Fatalf("outputs content.json graph %+v, %v", oc.Graph, err)
	}
	if err := VerifyGraph(out, oc.Graph); err != nil {
		t.Fatalf("--verify: %v", err)
	}
	if err := os.WriteFile(filepath.Join(out, oc.Graph[0].Path), []byte(oneGraph+" "), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := VerifyGraph(out, oc.Graph); err == nil || !strings.Contains(err.Error(), "truncated or changed") {
		t.Fatalf("--verify of an altered graph: %v", err)
	}

	if archive > 0 {
		return // an altered part is refused by its own hash (archive_hostile_test.go)
	}
	if err := os.WriteFile(graphFile, []byte(strings.Replace(oneGraph, "4.18.2", "4.18.3", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := from(t); err == nil || !strings.Contains(err.Error(), "truncated or changed on the way") {
		t.Fatalf("altered graph carried: %v", err)
	}
}
