// Package upgradetest builds, in a test's temporary directory, the inputs of an upgrade plan in
// their real formats: Cincinnati graph JSON per channel (nodes, index-pair edges,
// conditionalEdges with PromQL and Always rules), the cincinnati-graph-data layout (version,
// channels/, blocked-edges/), content.json with the graph files' hashes and the carried
// releases, file-based catalogs per OpenShift minor, and a captured cluster state (a Kubernetes
// List). The data are synthetic: versions, digests and operators invented for the tests.
package upgradetest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// Payload is a synthetic release payload by digest for a version.
func Payload(v string) string {
	s := sha256.Sum256([]byte("release " + v))
	return "quay.io/openshift-release-dev/ocp-release@sha256:" + hex.EncodeToString(s[:])
}

// Graph builds one channel's graph JSON.
type Graph struct {
	versions []string
	edges    [][2]string
	cond     []cond
}

type cond struct {
	edges [][2]string
	risks []map[string]any
}

// Nodes adds releases.
func (g *Graph) Nodes(vs ...string) *Graph { g.versions = append(g.versions, vs...); return g }

// Edge adds an unconditional update.
func (g *Graph) Edge(from, to string) *Graph {
	g.edges = append(g.edges, [2]string{from, to})
	return g
}

// Cond adds a conditional update with risks (see PromQLRisk, AlwaysRisk).
func (g *Graph) Cond(from, to string, risks ...map[string]any) *Graph {
	g.cond = append(g.cond, cond{edges: [][2]string{{from, to}}, risks: risks})
	return g
}

// PromQLRisk is a risk with one PromQL rule.
func PromQLRisk(name, query string) map[string]any {
	return map[string]any{"url": "https://issues.example.com/" + name, "name": name, "message": name + " affects some clusters.",
		"matchingRules": []any{map[string]any{"type": "PromQL", "promql": map[string]any{"promql": query}}}}
}

// GPURisk is the shape cincinnati-graph-data uses for a risk tied to the GPU Operator.
func GPURisk(name string) map[string]any {
	return PromQLRisk(name, "group(csv_succeeded{_id=\"\",name=~\"gpu-operator-certified[.].*\"})\nor\n0 * group(csv_count{_id=\"\"})\n")
}

// JSON renders the graph as the update service serves it.
func (g *Graph) JSON(metaChannel string) []byte {
	idx := map[string]int{}
	type node struct {
		Version  string            `json:"version"`
		Payload  string            `json:"payload"`
		Metadata map[string]string `json:"metadata"`
	}
	out := struct {
		Nodes            []node           `json:"nodes"`
		Edges            [][2]int         `json:"edges"`
		ConditionalEdges []map[string]any `json:"conditionalEdges,omitempty"`
	}{Edges: [][2]int{}}
	for i, v := range g.versions {
		idx[v] = i
		out.Nodes = append(out.Nodes, node{Version: v, Payload: Payload(v), Metadata: map[string]string{
			"io.openshift.upgrades.graph.release.channels": metaChannel,
			"url": "https://access.example.com/errata/" + v}})
	}
	for _, e := range g.edges {
		out.Edges = append(out.Edges, [2]int{idx[e[0]], idx[e[1]]})
	}
	for _, c := range g.cond {
		var es []map[string]string
		for _, e := range c.edges {
			es = append(es, map[string]string{"from": e[0], "to": e[1]})
		}
		out.ConditionalEdges = append(out.ConditionalEdges, map[string]any{"edges": es, "risks": c.risks})
	}
	b, _ := json.MarshalIndent(out, "", " ")
	return b
}

// Dir is a carried graph directory under construction.
type Dir struct {
	T    testing.TB
	Path string
}

// NewDir makes an empty carried directory.
func NewDir(t testing.TB) *Dir { return &Dir{T: t, Path: t.TempDir()} }

// Write writes a file (relative, slash-separated).
func (d *Dir) Write(rel string, b []byte) {
	d.T.Helper()
	p := filepath.Join(d.Path, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		d.T.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		d.T.Fatal(err)
	}
}

// Graph writes channel's graph for amd64.
func (d *Dir) Graph(channel string, g *Graph) {
	d.Write("cincinnati/"+channel+"-amd64.json", g.JSON(channel))
}

// Content writes content.json listing every file under cincinnati/ and graph-data/ with its
// hash and size, and the releases carried.
func (d *Dir) Content(carried ...string) {
	d.T.Helper()
	type entry struct {
		Path   string `json:"path"`
		SHA256 string `json:"sha256"`
		Size   int64  `json:"size"`
	}
	var es []entry
	for _, top := range []string{"cincinnati", "graph-data"} {
		_ = filepath.Walk(filepath.Join(d.Path, top), func(p string, fi os.FileInfo, err error) error {
			if err != nil || fi.IsDir() {
				return nil
			}
			b, _ := os.ReadFile(p)
			s := sha256.Sum256(b)
			rel, _ := filepath.Rel(d.Path, p)
			es = append(es, entry{Path: filepath.ToSlash(rel), SHA256: hex.EncodeToString(s[:]), Size: int64(len(b))})
			return nil
		})
	}
	sort.Slice(es, func(i, j int) bool { return es[i].Path < es[j].Path })
	type image struct {
		Source string `json:"source"`
		Dest   string `json:"dest"`
		Kind   string `json:"kind"`
		Digest string `json:"digest"`
	}
	var ims []image
	for _, v := range carried {
		p := Payload(v)
		_, dg, _ := strings.Cut(p, "@")
		ims = append(ims, image{Source: p, Dest: "registry.lab:5000/" + strings.TrimPrefix(p, "quay.io/"), Kind: "release", Digest: dg})
	}
	b, _ := json.MarshalIndent(map[string]any{"apiVersion": "bootstrap.dev/v1alpha1", "images": ims, "graph": es}, "", " ")
	d.Write("content.json", b)
}
