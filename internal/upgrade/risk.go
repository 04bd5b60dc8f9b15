package upgrade

import (
	"fmt"
	"regexp"
	"strings"
)

// Decision is whether a conditional update risk applies to this cluster.
type Decision string

const (
	Applies     Decision = "applies"     // decided from the cluster's objects: exposed
	NotApplies  Decision = "not-applies" // decided from the cluster's objects: not exposed
	Undecidable Decision = "undecidable" // cannot be decided offline: a named person must accept it
)

// RiskVerdict is a risk of an edge decided (or not) for this cluster, with the source of the
// decision and, for a risk taken, who accepted it.
type RiskVerdict struct {
	Name       string   `json:"name"`
	URL        string   `json:"url"`
	Message    string   `json:"message,omitempty"`
	Decision   Decision `json:"decision"`
	Source     string   `json:"source"`
	AcceptedBy string   `json:"acceptedBy,omitempty"`
}

// Blocking reports whether the edge cannot be taken without an acceptance.
func (v RiskVerdict) Blocking() bool { return v.Decision != NotApplies && v.AcceptedBy == "" }

// csvQuery is the one PromQL shape decided offline, the shape cincinnati-graph-data uses for
// risks tied to an installed operator:
//
//	group(csv_succeeded{_id="",name=~"REGEX"})
//	or
//	0 * group(csv_count{_id=""})
//
// csv_succeeded is OLM's metric with one series per Succeeded CSV, labelled with its name; the
// "or 0 * group(csv_count...)" arm makes the query return 0 instead of nothing when no CSV
// matches. The _id matcher (the telemetry cluster ID, empty in-cluster) is optional, and name may
// be matched exactly (=) or by regular expression (=~). Anything else is undecidable offline:
// metrics of a running cluster are not in a captured state.
var csvQuery = regexp.MustCompile(`^group\(csv_succeeded\{(?:_id="",)?name(=~|=)"([^"\\]+)"(?:,_id="")?\}\)(?:or0\*group\(csv_count\{(?:_id="")?\}\))?$`)

// decideRisk decides a risk from the cluster's CSVs. Rules are tried in order as the CVO does: a
// type it does not know is skipped; the first Always or PromQL rule decides (or is undecidable).
func decideRisk(r Risk, st *State) RiskVerdict {
	v := RiskVerdict{Name: r.Name, URL: r.URL, Message: strings.TrimSpace(r.Message), Decision: Undecidable}
	for i, m := range r.MatchingRules {
		switch m.Type {
		case "Always":
			v.Decision, v.Source = Applies, fmt.Sprintf("matchingRules[%d] is Always: every cluster is exposed", i)
			return v
		case "PromQL":
			q := strings.Join(strings.Fields(m.PromQL.PromQL), "")
			mm := csvQuery.FindStringSubmatch(q)
			if mm == nil {
				v.Source = fmt.Sprintf("matchingRules[%d] PromQL %q needs the cluster's metrics (not in the captured state)", i, strings.TrimSpace(m.PromQL.PromQL))
				return v
			}
			pat := regexp.QuoteMeta(mm[2])
			if mm[1] == "=~" {
				pat = mm[2]
			}
			re, err := regexp.Compile("^(?:" + pat + ")$")
			if err != nil {
				v.Source = fmt.Sprintf("matchingRules[%d]: name regex %q: %v", i, mm[2], err)
				return v
			}
			for _, c := range st.CSVs {
				if c.Phase == "Succeeded" && re.MatchString(c.Name) {
					v.Decision = Applies
					v.Source = fmt.Sprintf("CSV %s/%s (Succeeded) matches csv_succeeded{name%s%q}", c.Namespace, c.Name, mm[1], mm[2])
					return v
				}
			}
			v.Decision = NotApplies
			v.Source = fmt.Sprintf("none of the %d CSVs in the cluster state matches csv_succeeded{name%s%q}", len(st.CSVs), mm[1], mm[2])
			return v
		}
	}
	v.Source = "no matching rule of a known type (Always, PromQL)"
	return v
}
