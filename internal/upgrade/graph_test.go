package upgrade_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/upgrade"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade/upgradetest"
)

// The graph JSON as the CVO parses it: index-pair edges, conditional edges by version, risks
// with PromQL and Always rules.
func TestParseGraph(t *testing.T) {
	g := new(upgradetest.Graph).Nodes("4.17.10", "4.18.2").Edge("4.17.10", "4.18.2").
		Cond("4.17.10", "4.18.2", upgradetest.GPURisk("GPU"), map[string]any{"url": "https://x", "name": "All",
			"matchingRules": []any{map[string]any{"type": "Always"}}})
	p, err := upgrade.ParseGraph("g.json", g.JSON("stable-4.18"))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Nodes) != 2 || p.Edges[0] != (upgrade.Edge{0, 1}) || p.Nodes[1].Metadata[upgrade.ChannelsKey] != "stable-4.18" {
		t.Fatalf("%+v", p)
	}
	ce := p.ConditionalEdges[0]
	if ce.Edges[0].To != "4.18.2" || ce.Risks[0].MatchingRules[0].PromQL == nil || ce.Risks[1].MatchingRules[0].Type != "Always" {
		t.Fatalf("%+v", ce)
	}
}

// Bad graphs are refused naming the file and what is wrong.
func TestParseGraphRefuses(t *testing.T) {
	good := new(upgradetest.Graph).Nodes("4.17.10", "4.18.2").Edge("4.17.10", "4.18.2").JSON("stable-4.18")
	cases := []struct {
		name, doc, want string
	}{
		{"truncated", string(good[:len(good)/2]), "truncated"},
		{"unknown field", `{"nodes":[{"version":"4.1.0","payload":"q@sha256:1"}],"edges":[],"extra":1}`, `unknown field "extra"`},
		{"trailing data", `{"nodes":[{"version":"4.1.0","payload":"q@sha256:1"}],"edges":[]} {}`, "data after the graph"},
		{"edge out of range", `{"nodes":[{"version":"4.1.0","payload":"q@sha256:1"}],"edges":[[0,3]]}`, "index out of the 1 nodes"},
		{"bad version", `{"nodes":[{"version":"4.1","payload":"q@sha256:1"}],"edges":[]}`, `nodes[0].version "4.1"`},
		{"payload by tag", `{"nodes":[{"version":"4.1.0","payload":"q:4.1.0"}],"edges":[]}`, "not by digest"},
		{"risk without rules", `{"nodes":[{"version":"4.1.0","payload":"q@sha256:1"},{"version":"4.1.1","payload":"q@sha256:2"}],"edges":[],
			"conditionalEdges":[{"edges":[{"from":"4.1.0","to":"4.1.1"}],"risks":[{"url":"u","name":"R","matchingRules":[]}]}]}`, "risk R without matchingRules"},
		{"conditional edge to no node", `{"nodes":[{"version":"4.1.0","payload":"q@sha256:1"}],"edges":[],
			"conditionalEdges":[{"edges":[{"from":"4.1.0","to":"4.1.9"}],"risks":[{"url":"u","name":"R","matchingRules":[{"type":"Always"}]}]}]}`, `"4.1.9" is not a node`},
	}
	for _, tc := range cases {
		_, err := upgrade.ParseGraph("cincinnati/stable-4.18-amd64.json", []byte(tc.doc))
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "cincinnati/stable-4.18-amd64.json: ") {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
}

// A carried graph is checked against content.json: a changed or truncated file, an unlisted one
// and a listed one missing are refused; without content.json a truncated file is still refused
// as truncated. Graph-data files are parsed strictly.
func TestCarriedRefuses(t *testing.T) {
	graph := "cincinnati/stable-4.18-amd64.json"
	cases := []struct {
		name    string
		content bool
		mutate  func(d *upgradetest.Dir)
		reason  upgrade.Reason
		want    string
	}{
		{"truncated after the mirror", true, func(d *upgradetest.Dir) {
			p := filepath.Join(d.Path, graph)
			b, _ := os.ReadFile(p)
			_ = os.WriteFile(p, b[:100], 0o644)
		}, upgrade.ReasonHash, "content.json says"},
		{"unlisted file", true, func(d *upgradetest.Dir) {
			d.Write("cincinnati/fast-4.18-amd64.json", new(upgradetest.Graph).Nodes("4.18.2").JSON("fast-4.18"))
		}, upgrade.ReasonHash, "not listed in content.json"},
		{"listed file missing", true, func(d *upgradetest.Dir) {
			_ = os.Remove(filepath.Join(d.Path, "graph-data/blocked-edges/4.18.30-Regression.yaml"))
		}, upgrade.ReasonHash, "listed in content.json and missing"},
		{"truncated without content.json", false, func(d *upgradetest.Dir) {
			p := filepath.Join(d.Path, graph)
			b, _ := os.ReadFile(p)
			_ = os.WriteFile(p, b[:len(b)-3], 0o644)
		}, upgrade.ReasonGraph, "truncated"},
		{"blocked edge unknown field", false, func(d *upgradetest.Dir) {
			d.Write("graph-data/blocked-edges/x.yaml", []byte("to: 4.18.2\nfrom: 4.17.*\nnmae: X\n"))
		}, upgrade.ReasonGraph, "nmae"},
		{"blocked edge bad regex", false, func(d *upgradetest.Dir) {
			d.Write("graph-data/blocked-edges/x.yaml", []byte("to: 4.18.2\nfrom: 4.17.(\n"))
		}, upgrade.ReasonGraph, "x.yaml: from"},
		{"no graph for the architecture", false, func(d *upgradetest.Dir) {
			_ = os.RemoveAll(filepath.Join(d.Path, "cincinnati"))
		}, upgrade.ReasonGraph, "no graph for architecture amd64"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := upgradetest.Standard(t, tc.content)
			tc.mutate(d)
			_, err := upgrade.Load(d.Path, "amd64")
			r := refusal(t, err, tc.reason)
			if !strings.Contains(r.Error(), tc.want) || r.Remedy() == "" {
				t.Fatalf("%v (remedy %q), want %q", r, r.Remedy(), tc.want)
			}
			// the remedy names the ImageSetConfiguration lines that bring the file again
			lines := "      graph: true"
			if strings.Contains(r.File, "stable-4.18-amd64.json") {
				lines += "\n      architectures: [amd64]\n      channels:\n      - name: stable-4.18"
			}
			if !strings.Contains(r.Remedy(), lines) {
				t.Fatalf("%s: the remedy lacks the ISC lines %q:\n%s", r.File, lines, r.Remedy())
			}
		})
	}
}
