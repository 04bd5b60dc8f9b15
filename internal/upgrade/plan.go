package upgrade

import (
	"fmt"
	"strings"

	"github.com/blang/semver/v4"
)

// Options are the plan's inputs besides the graph and the state.
type Options struct {
	// To is the target version.
	To string
	// Accept maps a risk name to the person who accepted it (--accept-risk NAME=PERSON).
	Accept map[string]string
	// Matrix is the NVIDIA matrix (LoadMatrix when nil).
	Matrix *Matrix
	// AllowMissing plans through releases content.json does not list (marked carried "no", for
	// a delta to mirror) instead of refusing.
	AllowMissing bool
}

// Plan is an upgrade plan: the hops, each with its edge, risks, compatibility gate, operator
// steps and acks, and what must be carried. It holds no time and no map: the same inputs give
// the same JSON, byte for byte.
type Plan struct {
	From    string    `json:"from"`
	To      string    `json:"to"`
	Arch    string    `json:"arch"`
	Graph   GraphInfo `json:"graph"`
	EUS     *EUS      `json:"eus,omitempty"`
	Hops    []Hop     `json:"hops"`
	Images  []Image   `json:"images"`
	Accepts []Accept  `json:"acceptances,omitempty"`
	// Blockers are the gate verdicts that stop a hop, as "hop: subject: message".
	Blockers []string `json:"blockers,omitempty"`
	// Undecided are the facts that could not be decided offline.
	Undecided []string `json:"undecided,omitempty"`
}

// GraphInfo says what graph the plan was computed from.
type GraphInfo struct {
	Dir          string   `json:"dir"`
	Channels     []string `json:"channels"`
	DataVersion  string   `json:"graphDataVersion,omitempty"`
	Verified     bool     `json:"hashVerified"`
	RemovedEdges []string `json:"removedEdges,omitempty"`
}

// EUS is set when the path is an EUS-to-EUS update: worker pools paused for the intermediate
// minor, so workers reboot once.
type EUS struct {
	Channel    string   `json:"channel"`
	PausePools []string `json:"pausePools"`
}

// Hop is one update the CVO is asked for.
type Hop struct {
	From    string        `json:"from"`
	To      string        `json:"to"`
	Payload string        `json:"payload"`
	Channel string        `json:"channel"`
	Edge    string        `json:"edge"` // unconditional or conditional
	Sources []string      `json:"sources"`
	Risks   []RiskVerdict `json:"risks,omitempty"`
	Carried string        `json:"carried"` // yes, or why it was not checked
	Gate    []Verdict     `json:"gate,omitempty"`
	Before  []Step        `json:"before,omitempty"`
	After   []Step        `json:"after,omitempty"`
	Acks    []Ack         `json:"acks,omitempty"`
	// Subscriptions move to the next minor's CatalogSource (the run's subscriptions step).
	Subscriptions []SubscriptionMove `json:"subscriptions,omitempty"`
}

// Verdict is one compatibility check of a hop, with its source.
type Verdict struct {
	Check   string `json:"check"`
	Subject string `json:"subject"`
	Result  string `json:"result"` // pass, block, unknown
	Message string `json:"message"`
	Source  string `json:"source"`
}

// Step is an operator action before or after a hop.
type Step struct {
	Subject string `json:"subject"`
	Action  string `json:"action"`
	Source  string `json:"source"`
	Image   string `json:"image,omitempty"` // the bundle or image the step needs carried
	// CSV is the ClusterServiceVersion an operator update installs (its bundle's name): the
	// InstallPlans `upgrade run` approves are those whose every CSV a step names.
	CSV string `json:"csv,omitempty"`

	bundle *stepBundle // the bundle an operator update installs (for the delta)
	before bool        // from the source minor's catalog
}

// stepBundle is the bundle of an operator step.
type stepBundle struct {
	source, pkg, channel, name string
	image                      string // set for a move's bundle (a step carries its own Image)
	version                    semver.Version
	// defaultChannel is the package's default channel in that catalog: a delta that keeps
	// other channels only must name one it keeps (the mirror's catalog filter refuses otherwise).
	defaultChannel string
}

// Ack is an admin-ack a hop needs.
type Ack struct {
	Key     string `json:"key"`
	Message string `json:"message,omitempty"`
	Given   bool   `json:"given"`
	Source  string `json:"source"`
}

// Image is something to carry for the plan.
type Image struct {
	Ref  string `json:"ref"`
	Kind string `json:"kind"` // release, signature, cosign-signature, driver, bundle
	For  string `json:"for"`
}

// Accept is a risk taken by a named person.
type Accept struct {
	Risk string `json:"risk"`
	By   string `json:"by"`
	Hop  string `json:"hop"`
}

// Compute makes the plan from the carried graph and the cluster state, or refuses with a
// *Refusal naming what is missing.
func Compute(c *Carried, st *State, o Options) (*Plan, error) {
	if o.Matrix == nil {
		m, err := LoadMatrix()
		if err != nil {
			return nil, err
		}
		o.Matrix = m
	}
	u, err := newUniverse(c)
	if err != nil {
		return nil, err
	}
	from, err := semver.Parse(st.Version)
	if err != nil {
		return nil, refuse(ReasonState, st.File, "", "cluster version %q: %v", st.Version, err)
	}
	to, err := semver.Parse(o.To)
	if err != nil {
		return nil, refuse(ReasonUnknownTarget, "", "give --to a release version such as 4.18.30", "--to %q is not a version: %v", o.To, err)
	}
	if !to.GT(from) {
		return nil, refuse(ReasonOlderTarget, st.File, "give --to a release newer than "+st.Version+", or capture the cluster's state again if it changed",
			"--to %s is not newer than the cluster's version %s (ClusterVersion history): a plan cannot go back", o.To, st.Version)
	}
	if u.releases[o.To] == nil {
		return nil, unknownTarget(u, c, o.To)
	}
	if u.releases[st.Version] == nil {
		return nil, refuse(ReasonUnknownTarget, c.Dir, iscLines(minorOf(from), st.Version, ""),
			"the cluster's version %s is not in the carried graph (channels %s)", st.Version, strings.Join(sortedKeys(c.Graphs), ", "))
	}
	s := &search{u: u, st: st, o: o, from: from, to: to}
	p := &Plan{From: st.Version, To: o.To, Arch: st.Arch, Graph: GraphInfo{Dir: c.Dir, Channels: sortedKeys(c.Graphs), Verified: c.Verified, RemovedEdges: u.removed}}
	if c.Data != nil {
		p.Graph.DataVersion = c.Data.Version
	} else {
		p.Undecided = append(p.Undecided, "graph-data not carried: blocked edges could not be applied beyond what the graph JSON holds")
	}
	if !c.Verified {
		p.Undecided = append(p.Undecided, "the graph files were not hash-verified (no graph entries in content.json)")
	}
	path, eus := s.best()
	if path == nil {
		return nil, s.explain()
	}
	if eus != "" {
		p.EUS = &EUS{Channel: eus, PausePools: workerPools(st)}
	}
	var missing []string
	for _, e := range path {
		h := s.hop(e, eus)
		switch {
		case c.Images == nil:
			h.Carried = "not checked: no content.json beside the graph"
		case c.Images[digestOf(h.Payload)]:
			h.Carried = "yes"
		default:
			missing = append(missing, h.To)
		}
		for _, r := range h.Risks {
			if r.AcceptedBy != "" {
				p.Accepts = append(p.Accepts, Accept{Risk: r.Name, By: r.AcceptedBy, Hop: h.From + " -> " + h.To})
			}
		}
		p.Hops = append(p.Hops, h)
	}
	if len(missing) > 0 && o.AllowMissing {
		for i := range p.Hops {
			if p.Hops[i].Carried == "" {
				p.Hops[i].Carried = "no"
			}
		}
		missing = nil
	}
	if len(missing) > 0 {
		var lines []string
		for _, v := range missing {
			sv := semver.MustParse(v)
			lines = append(lines, iscLines(minorOf(sv), v, v))
		}
		return nil, refuse(ReasonNotCarried, c.Dir, "add to the ImageSetConfiguration and mirror again:\n"+strings.Join(lines, "\n"),
			"the path %s needs release(s) %s, not in content.json", pathString(path), strings.Join(missing, ", "))
	}
	gateAll(p, c, st, o.Matrix)
	planMoves(p, c, st)
	p.Images = images(p)
	return p, nil
}

// search finds the path.
type search struct {
	u        *universe
	st       *State
	o        Options
	from, to semver.Version
}

// cand is the best path found to a release.
type cand struct {
	hops, accepts int
	path          []*edge
}

// better orders paths: fewer hops, then fewer accepted risks, then the newer release at the
// first difference (the latest z-stream of each minor carries the most fixes).
func (s *search) better(a, b *cand) bool {
	if a.hops != b.hops {
		return a.hops < b.hops
	}
	if a.accepts != b.accepts {
		return a.accepts < b.accepts
	}
	for i := range a.path {
		va, vb := s.u.releases[a.path[i].To].Version, s.u.releases[b.path[i].To].Version
		if !va.EQ(vb) {
			return va.GT(vb)
		}
	}
	return false
}

// permitted is the CVO's rule: same major, at most one minor up, never past the target.
func (s *search) permitted(e *edge) bool {
	f, t := s.u.releases[e.From].Version, s.u.releases[e.To].Version
	return f.Major == t.Major && t.Minor >= f.Minor && t.Minor-f.Minor <= 1 && t.LTE(s.to)
}

// verdicts decides the risks of an edge (and NVIDIA's avoided releases) for this cluster.
func (s *search) verdicts(e *edge) []RiskVerdict {
	var vs []RiskVerdict
	for _, r := range e.Risks {
		v := decideRisk(r, s.st)
		if v.Decision != NotApplies {
			v.AcceptedBy = s.o.Accept[v.Name]
		}
		vs = append(vs, v)
	}
	for _, a := range s.o.Matrix.AvoidReleases {
		if a.Version != e.To {
			continue
		}
		for _, c := range s.st.CSVs {
			if strings.HasPrefix(c.Name, a.Package+".") {
				name := "NVIDIAAvoid-" + a.Version
				v := RiskVerdict{Name: name, URL: "https://docs.nvidia.com/datacenter/cloud-native/openshift/latest/steps-overview.html",
					Message:  fmt.Sprintf("NVIDIA: do not use or upgrade to %s with the GPU Operator installed; fixed in %s", a.Version, a.FixedIn),
					Decision: Applies, Source: s.o.Matrix.cite(fmt.Sprintf("avoidReleases %s, CSV %s/%s installed", a.Version, c.Namespace, c.Name), a.Confirmed),
					AcceptedBy: s.o.Accept[name]}
				vs = append(vs, v)
				break
			}
		}
	}
	return vs
}

// walk runs the forward pass over releases in version order (every edge goes up, so that order
// is topological). allowBlocked counts an unaccepted risk as an acceptance instead of refusing
// the edge; only picks restricts the releases (an EUS channel).
func (s *search) walk(allowBlocked bool, only func(*release) bool) *cand {
	best := map[string]*cand{s.st.Version: {}}
	for _, r := range s.u.sortedVersions() {
		v := r.Version.String()
		cur := best[v]
		if cur == nil || r.Version.GTE(s.to) {
			continue
		}
		for _, e := range s.u.out[v] {
			if !s.permitted(e) || (only != nil && !only(s.u.releases[e.To])) {
				continue
			}
			n := &cand{hops: cur.hops + 1, accepts: cur.accepts, path: append(append([]*edge(nil), cur.path...), e)}
			ok := true
			for _, rv := range s.verdicts(e) {
				switch {
				case rv.AcceptedBy != "":
					n.accepts++
				case rv.Blocking() && allowBlocked:
					n.accepts += 1000
				case rv.Blocking():
					ok = false
				}
			}
			if ok && (best[e.To] == nil || s.better(n, best[e.To])) {
				best[e.To] = n
			}
		}
	}
	return best[s.to.String()]
}

// best is the path over edges usable without new acceptances: an EUS-to-EUS path when the
// cluster is on an even (EUS) minor, the target two minors up and the carried graph has the
// eus channel of the target holding every release of the path; else the best path.
func (s *search) best() ([]*edge, string) {
	if s.from.Minor%2 == 0 && s.to.Minor == s.from.Minor+2 && s.to.Major == s.from.Major {
		ch := fmt.Sprintf("eus-%d.%d", s.to.Major, s.to.Minor)
		if c := s.walk(false, func(r *release) bool { return r.Channels[ch] }); c != nil && s.u.releases[s.st.Version].Channels[ch] {
			return c.path, ch
		}
	}
	if c := s.walk(false, nil); c != nil {
		return c.path, ""
	}
	return nil, ""
}
