package mirror

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
