package upgrade

import (
	"fmt"
	"sort"
	"strings"

	"github.com/blang/semver/v4"
)

// explain says why no path was found: risks nobody accepted on the best path there is, or the
// first minor the carried graph cannot reach.
func (s *search) explain() error {
	if c := s.walk(true, nil); c != nil {
		var need, flags []string
		for _, e := range c.path {
			for _, v := range s.verdicts(e) {
				if v.Blocking() {
					need = append(need, fmt.Sprintf("%s on %s -> %s (%s: %s)", v.Name, e.From, e.To, v.Decision, v.Source))
					flags = append(flags, "--accept-risk "+v.Name+"=PERSON")
				}
			}
		}
		return refuse(ReasonRisk, "", "read each risk's URL; if the person responsible accepts it, run again with "+strings.Join(dedup(flags), " ")+" (PERSON: who accepted it, recorded in the plan)",
			"the only path, %s, takes conditional updates whose risks apply or cannot be decided offline, and nobody accepted them: %s",
			pathString(c.path), strings.Join(need, "; "))
	}
	// reachable over every permitted edge, risks ignored
	reach := map[string]bool{s.st.Version: true}
	top := s.from
	for _, r := range s.u.sortedVersions() {
		v := r.Version.String()
		if !reach[v] {
			continue
		}
		if r.Version.Minor > top.Minor || (r.Version.Minor == top.Minor && r.Version.GT(top)) {
			top = r.Version
		}
		for _, e := range s.u.out[v] {
			if s.permitted(e) {
				reach[e.To] = true
			}
		}
	}
	if top.Minor < s.to.Minor {
		next := fmt.Sprintf("%d.%d", top.Major, top.Minor+1)
		return refuse(ReasonNoPath, "", "carry the graph and releases of "+next+": add to the ImageSetConfiguration and mirror again:\n"+iscLines(next, "", ""),
			"no path from %s to %s one minor per hop: the carried graph reaches %s and has no update from there into %s (an intermediate minor is missing or its edges were blocked)",
			s.st.Version, s.to, top, next)
	}
	return refuse(ReasonNoPath, "", fmt.Sprintf("pick a target the carried graph reaches (the newest reached is %s), or carry newer graph data", top),
		"no path from %s to %s: the carried graph has no update into %s from any release reachable from %s", s.st.Version, s.to, s.to, s.st.Version)
}

// unknownTarget refuses a --to that no carried graph holds, listing the nearest releases.
func unknownTarget(u *universe, c *Carried, to string) error {
	minor := to
	if v, err := semver.Parse(to); err == nil {
		minor = minorOf(v)
	}
	var same []string
	for _, r := range u.sortedVersions() {
		if minorOf(r.Version) == minor {
			same = append(same, r.Version.String())
		}
	}
	msg := fmt.Sprintf("--to %s is not a release of the carried graph (channels %s)", to, strings.Join(sortedKeys(c.Graphs), ", "))
	if len(same) > 0 {
		if len(same) > 8 {
			same = same[len(same)-8:]
		}
		msg += "; its " + minor + " releases include " + strings.Join(same, ", ")
	}
	return refuse(ReasonUnknownTarget, c.Dir, "pick a carried release, or add to the ImageSetConfiguration and mirror again:\n"+iscLines(minor, to, to), "%s", msg)
}

// iscLines is the ImageSetConfiguration fragment that carries a minor's graph (and a release).
func iscLines(minor, min, max string) string {
	s := "  mirror:\n    platform:\n      graph: true\n      channels:\n      - name: stable-" + minor + "\n"
	if min != "" {
		s += "        minVersion: " + min + "\n"
	}
	if max != "" {
		s += "        maxVersion: " + max + "\n"
	}
	return strings.TrimRight(s, "\n")
}

// hop builds a hop from an edge: its payload, channel, risks decided.
func (s *search) hop(e *edge, eus string) Hop {
	r := s.u.releases[e.To]
	h := Hop{From: e.From, To: e.To, Payload: r.Payload, Sources: e.Sources, Edge: "unconditional", Risks: s.verdicts(e)}
	if e.Conditional() {
		h.Edge = "conditional"
	}
	h.Channel = eus
	if h.Channel == "" {
		kind := "stable"
		if k, _, ok := strings.Cut(s.st.Channel, "-"); ok && k != "eus" {
			kind = k
		}
		h.Channel = kind + "-" + minorOf(r.Version)
		if !r.Channels[h.Channel] {
			for _, ch := range sortedKeys(r.Channels) {
				if strings.HasSuffix(ch, "-"+minorOf(r.Version)) {
					h.Channel = ch
					break
				}
			}
		}
	}
	return h
}

// workerPools are the pools to pause for an EUS-to-EUS update: every pool but master.
func workerPools(st *State) []string {
	var ps []string
	for _, p := range st.Pools {
		if p.Name != "master" {
			ps = append(ps, p.Name)
		}
	}
	if len(ps) == 0 {
		ps = []string{"worker"}
	}
	return ps
}

func minorOf(v semver.Version) string { return fmt.Sprintf("%d.%d", v.Major, v.Minor) }

// digestOf is the digest of a by-digest reference.
func digestOf(ref string) string {
	_, d, _ := strings.Cut(ref, "@")
	return d
}

func pathString(es []*edge) string {
	if len(es) == 0 {
		return ""
	}
	vs := []string{es[0].From}
	for _, e := range es {
		vs = append(vs, e.To)
	}
	return strings.Join(vs, " -> ")
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func dedup(ss []string) []string {
	var out []string
	for _, s := range ss {
		if !contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
