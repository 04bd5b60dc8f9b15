package upgrade

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/blang/semver/v4"
)

// Graph is one channel's update graph as the update service serves it and the CVO parses it
// (cluster-version-operator pkg/cincinnati): nodes, edges as index pairs into nodes, and
// conditional edges named by version.
type Graph struct {
	Nodes            []Node             `json:"nodes"`
	Edges            []Edge             `json:"edges"`
	ConditionalEdges []ConditionalEdges `json:"conditionalEdges,omitempty"`
}

// Node is a release: its version, its payload by digest and the service's metadata (channels,
// errata URL, manifest digest).
type Node struct {
	Version  string            `json:"version"`
	Payload  string            `json:"payload"`
	Metadata map[string]string `json:"metadata,omitempty"`
}

// Edge is an update from Nodes[0] to Nodes[1], written [from, to].
type Edge [2]int

// ConditionalEdges are updates recommended only where none of the risks applies.
type ConditionalEdges struct {
	Edges []VersionEdge `json:"edges"`
	Risks []Risk        `json:"risks"`
}

// VersionEdge is an update named by its versions.
type VersionEdge struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// Risk is a known issue of an update and the rules that say whether a cluster is exposed
// (config.openshift.io ConditionalUpdateRisk).
type Risk struct {
	URL           string         `json:"url"`
	Name          string         `json:"name"`
	Message       string         `json:"message,omitempty"`
	MatchingRules []MatchingRule `json:"matchingRules"`
}

// MatchingRule is one way to decide exposure: Always, or a PromQL query (exposed when it
// returns 1). The CVO tries the rules in order and uses the first it can evaluate.
type MatchingRule struct {
	Type   string      `json:"type" yaml:"type"`
	PromQL *PromQLRule `json:"promql,omitempty" yaml:"promql,omitempty"`
}

// PromQLRule holds the query of a PromQL rule.
type PromQLRule struct {
	PromQL string `json:"promql" yaml:"promql"`
}

// ChannelsKey is the node metadata listing the channels a release is in, comma-separated.
const ChannelsKey = "io.openshift.upgrades.graph.release.channels"

// maxGraphBytes bounds one graph JSON file: the whole public graph of every channel is a few
// MiB, so anything larger is not a graph.
const maxGraphBytes = 64 << 20

// ParseGraph decodes a graph JSON strictly: unknown fields, trailing data, edges out of range,
// versions that are not semantic versions, duplicate versions and payloads not by digest are
// refused, naming file. A truncated file is refused as truncated.
func ParseGraph(file string, b []byte) (*Graph, error) {
	fix := carryAgain("carry the channel's graph again (bootstrap mirror writes it with its hash into content.json)", file)
	if len(b) > maxGraphBytes {
		return nil, refuse(ReasonGraph, file, fix, "%d bytes, more than a graph can be (%d)", len(b), maxGraphBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var g Graph
	if err := dec.Decode(&g); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return nil, refuse(ReasonGraph, file, fix, "truncated: the JSON ends at byte %d before the graph does", len(b))
		}
		return nil, refuse(ReasonGraph, file, fix, "not a Cincinnati graph: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, refuse(ReasonGraph, file, fix, "data after the graph at byte %d", dec.InputOffset())
	}
	if err := g.validate(); err != nil {
		return nil, refuse(ReasonGraph, file, fix, "%v", err)
	}
	return &g, nil
}

func (g *Graph) validate() error {
	if len(g.Nodes) == 0 {
		return errors.New("no nodes")
	}
	seen := make(map[string]int, len(g.Nodes))
	for i, n := range g.Nodes {
		if _, err := semver.Parse(n.Version); err != nil {
			return fmt.Errorf("nodes[%d].version %q: %v", i, n.Version, err)
		}
		if j, dup := seen[n.Version]; dup {
			return fmt.Errorf("nodes[%d] and nodes[%d] are both version %s", j, i, n.Version)
		}
		seen[n.Version] = i
		if !strings.Contains(n.Payload, "@sha256:") {
			return fmt.Errorf("nodes[%d] (%s): payload %q is not by digest", i, n.Version, n.Payload)
		}
	}
	for i, e := range g.Edges {
		for _, x := range e {
			if x < 0 || x >= len(g.Nodes) {
				return fmt.Errorf("edges[%d] = [%d,%d]: index out of the %d nodes", i, e[0], e[1], len(g.Nodes))
			}
		}
	}
	for i, ce := range g.ConditionalEdges {
		if len(ce.Edges) == 0 || len(ce.Risks) == 0 {
			return fmt.Errorf("conditionalEdges[%d]: needs edges and risks", i)
		}
		for j, e := range ce.Edges {
			for _, v := range []string{e.From, e.To} {
				if _, ok := seen[v]; !ok {
					return fmt.Errorf("conditionalEdges[%d].edges[%d]: version %q is not a node", i, j, v)
				}
			}
		}
		for j, r := range ce.Risks {
			if err := r.validate(); err != nil {
				return fmt.Errorf("conditionalEdges[%d].risks[%d]: %v", i, j, err)
			}
		}
	}
	return nil
}

// validate applies the API's rules for a ConditionalUpdateRisk: a name, a URL and at least one
// rule. A rule of a type this version does not know is kept: it is undecidable, not invalid.
func (r Risk) validate() error {
	switch {
	case r.Name == "":
		return errors.New("risk without a name")
	case r.URL == "":
		return fmt.Errorf("risk %s without a url", r.Name)
	case len(r.MatchingRules) == 0:
		return fmt.Errorf("risk %s without matchingRules", r.Name)
	}
	for i, m := range r.MatchingRules {
		if m.Type == "PromQL" && (m.PromQL == nil || strings.TrimSpace(m.PromQL.PromQL) == "") {
			return fmt.Errorf("risk %s: matchingRules[%d] of type PromQL without a query", r.Name, i)
		}
	}
	return nil
}
