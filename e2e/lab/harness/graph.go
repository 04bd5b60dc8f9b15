package harness

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// blockedEdge is a graph-data blocked-edges file: an edge removed (no rule) or made conditional
// (a PromQL rule), in cincinnati-graph-data's fields.
type blockedEdge struct {
	to, from, name, message, promql string
}

var blockedEdges = []blockedEdge{
	{to: "4.19.1", from: `4[.]18[.].*`, name: BlockedRisk, message: "Updates from 4.18 to 4.19.1 lose the lab's ingress; 4.19.2 fixes it."},
	{to: "4.20.1", from: `4[.]19[.].*`, name: ConditionalRisk, message: "Bare metal clusters may lose a node during the update.",
		promql: `cluster_infrastructure_provider{_id="",type="BareMetal"}`},
}

func (b blockedEdge) url() string { return "https://issues.example.com/" + b.name }

func (b blockedEdge) yaml() string {
	s := "to: " + b.to + "\nfrom: " + b.from + "\nurl: " + b.url() + "\nname: " + b.name + "\nmessage: " + b.message + "\n"
	if b.promql != "" {
		s += "matchingRules:\n- type: PromQL\n  promql:\n    promql: |\n      " + b.promql + "\n"
	}
	return s
}

func (b blockedEdge) matches(from, to string) bool {
	ok, _ := regexp.MatchString("^("+b.from+")$", from)
	return ok && to == b.to
}

// Graphs renders each channel's graph as the update service serves it (nodes {version, payload
// by digest, metadata}, edges as index pairs, conditionalEdges with their risks): nodes are the
// channel's versions, edges the payloads' previous lists within the channel, minus the blocked
// edges without rules; blocked edges with a rule become conditional edges.
func Graphs(digests map[string]string, meta map[string]PayloadMetadata) (map[string][]byte, error) {
	chs := Channels()
	inChannels := map[string][]string{}
	for ch, vs := range chs {
		for _, v := range vs {
			inChannels[v] = append(inChannels[v], ch)
		}
	}
	type node struct {
		Version  string            `json:"version"`
		Payload  string            `json:"payload"`
		Metadata map[string]string `json:"metadata"`
	}
	type risk struct {
		URL           string `json:"url"`
		Name          string `json:"name"`
		Message       string `json:"message"`
		MatchingRules []any  `json:"matchingRules"`
	}
	type condEdge struct {
		Edges []map[string]string `json:"edges"`
		Risks []risk              `json:"risks"`
	}
	out := map[string][]byte{}
	for ch, vs := range chs {
		g := struct {
			Nodes            []node     `json:"nodes"`
			Edges            [][2]int   `json:"edges"`
			ConditionalEdges []condEdge `json:"conditionalEdges"`
		}{Edges: [][2]int{}, ConditionalEdges: []condEdge{}}
		idx := map[string]int{}
		for i, v := range vs {
			d, ok := digests[v]
			if !ok {
				return nil, fmt.Errorf("graph %s: no payload digest for %s", ch, v)
			}
			cs := append([]string(nil), inChannels[v]...)
			sort.Strings(cs)
			idx[v] = i
			g.Nodes = append(g.Nodes, node{Version: v, Payload: "quay.io/openshift-release-dev/ocp-release@" + d, Metadata: map[string]string{
				"io.openshift.upgrades.graph.release.channels":    strings.Join(cs, ","),
				"io.openshift.upgrades.graph.release.manifestref": d,
				"url": meta[v].Metadata["url"]}})
		}
		for _, to := range vs {
			for _, from := range meta[to].Previous {
				fi, ok := idx[from]
				if !ok {
					continue
				}
				blocked := false
				for _, b := range blockedEdges {
					if !b.matches(from, to) {
						continue
					}
					blocked = true
					if b.promql != "" {
						g.ConditionalEdges = append(g.ConditionalEdges, condEdge{Edges: []map[string]string{{"from": from, "to": to}},
							Risks: []risk{{URL: b.url(), Name: b.name, Message: b.message, MatchingRules: []any{
								map[string]any{"type": "PromQL", "promql": map[string]string{"promql": b.promql + "\n"}}}}}})
					}
				}
				if !blocked {
					g.Edges = append(g.Edges, [2]int{fi, idx[to]})
				}
			}
		}
		b, err := json.Marshal(g)
		if err != nil {
			return nil, err
		}
		out[ch] = b
	}
	return out, nil
}
