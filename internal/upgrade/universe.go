package upgrade

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/blang/semver/v4"
)

// release is a node of the merged graph.
type release struct {
	Version  semver.Version
	Payload  string
	URL      string
	Channels map[string]bool
}

// edge is an update of the merged graph, with the risks that make it conditional.
type edge struct {
	From, To string
	Risks    []Risk
	// Sources name where the edge and each risk came from (graph files, blocked-edges files).
	Sources []string
}

// Conditional reports whether the edge has risks.
func (e *edge) Conditional() bool { return len(e.Risks) > 0 }

// universe is the union of the carried channel graphs with the graph-data's blocked edges
// applied: a blocked edge without rules is removed, one with rules becomes conditional.
type universe struct {
	releases map[string]*release
	out      map[string][]*edge // by from version, sorted by to
	removed  []string           // "from -> to (blocked-edges/x.yaml)", sorted
}

func newUniverse(c *Carried) (*universe, error) {
	u := &universe{releases: map[string]*release{}, out: map[string][]*edge{}}
	edges := map[[2]string]*edge{}
	chans := make([]string, 0, len(c.Graphs))
	for ch := range c.Graphs {
		chans = append(chans, ch)
	}
	sort.Strings(chans)
	add := func(from, to, src string) *edge {
		k := [2]string{from, to}
		e := edges[k]
		if e == nil {
			e = &edge{From: from, To: to}
			edges[k] = e
		}
		if !contains(e.Sources, src) {
			e.Sources = append(e.Sources, src)
		}
		return e
	}
	for _, ch := range chans {
		g := c.Graphs[ch]
		src := filepath.ToSlash(filepath.Join(GraphDir, ch))
		for _, n := range g.Nodes {
			r := u.releases[n.Version]
			if r == nil {
				r = &release{Version: semver.MustParse(n.Version), Payload: n.Payload, URL: n.Metadata["url"], Channels: map[string]bool{}}
				u.releases[n.Version] = r
			} else if r.Payload != n.Payload {
				return nil, refuse(ReasonGraph, filepath.Join(c.Dir, src+"-*.json"), "carry the graphs again from one update service",
					"release %s has payload %s here and %s in another channel's graph", n.Version, n.Payload, r.Payload)
			}
			r.Channels[ch] = true
			for _, m := range strings.Split(n.Metadata[ChannelsKey], ",") {
				if m = strings.TrimSpace(m); m != "" {
					r.Channels[m] = true
				}
			}
		}
		// The CVO drops every conditional update to a target the graph declares more than once
		// from the same version (and the unconditional one with it, which the conditional
		// replaces): such an edge is not offered by this channel.
		twice := map[[2]string]int{}
		for _, ce := range g.ConditionalEdges {
			for _, ve := range ce.Edges {
				twice[[2]string{ve.From, ve.To}]++
			}
		}
		for k, n := range twice {
			if n > 1 {
				u.removed = append(u.removed, fmt.Sprintf("%s -> %s (%s: %d conditional updates declared; the CVO drops them all)", k[0], k[1], src, n))
			}
		}
		for _, e := range g.Edges {
			from, to := g.Nodes[e[0]].Version, g.Nodes[e[1]].Version
			if twice[[2]string{from, to}] <= 1 {
				add(from, to, src)
			}
		}
		for _, ce := range g.ConditionalEdges {
			for _, ve := range ce.Edges {
				if twice[[2]string{ve.From, ve.To}] > 1 {
					continue
				}
				e := add(ve.From, ve.To, src)
				for _, r := range ce.Risks {
					e.addRisk(r)
				}
			}
		}
	}
	if c.Data != nil {
		for ch, vs := range c.Data.Channels {
			for _, v := range vs {
				if r := u.releases[v]; r != nil {
					r.Channels[ch] = true
				}
			}
		}
		for k, e := range edges {
			for _, b := range c.Data.Blocked {
				if !b.Matches(e.From, e.To) {
					continue
				}
				src := b.File // graph-data/blocked-edges/NAME.yaml
				if len(b.MatchingRules) == 0 {
					delete(edges, k)
					u.removed = append(u.removed, fmt.Sprintf("%s -> %s (%s)", e.From, e.To, src))
					break
				}
				e.addRisk(b.Risk())
				if !contains(e.Sources, src) {
					e.Sources = append(e.Sources, src)
				}
			}
		}
	}
	// The CVO prunes the matching rules it does not recognise and drops a conditional update
	// left with a risk without rules: it is never offered.
	for k, e := range edges {
		for _, r := range e.Risks {
			if !recognised(r) {
				delete(edges, k)
				u.removed = append(u.removed, fmt.Sprintf("%s -> %s (risk %s has no rule the CVO recognises, Always or PromQL; the CVO drops the update)", e.From, e.To, r.Name))
				break
			}
		}
	}
	sort.Strings(u.removed)
	for _, e := range edges {
		sort.Slice(e.Risks, func(i, j int) bool { return e.Risks[i].Name < e.Risks[j].Name })
		sort.Strings(e.Sources)
		u.out[e.From] = append(u.out[e.From], e)
	}
	for _, es := range u.out {
		sort.Slice(es, func(i, j int) bool { return u.releases[es[i].To].Version.LT(u.releases[es[j].To].Version) })
	}
	return u, nil
}

// addRisk adds r unless a risk of the same name is there.
func (e *edge) addRisk(r Risk) {
	for _, x := range e.Risks {
		if x.Name == r.Name {
			return
		}
	}
	e.Risks = append(e.Risks, r)
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// sortedVersions returns the releases in ascending version order.
func (u *universe) sortedVersions() []*release {
	rs := make([]*release, 0, len(u.releases))
	for _, r := range u.releases {
		rs = append(rs, r)
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i].Version.LT(rs[j].Version) })
	return rs
}

// recognised reports whether a risk has a rule of a type the CVO evaluates.
func recognised(r Risk) bool {
	for _, m := range r.MatchingRules {
		if m.Type == "Always" || m.Type == "PromQL" && m.PromQL != nil && strings.TrimSpace(m.PromQL.PromQL) != "" {
			return true
		}
	}
	return false
}
