package upgrade

import "testing"

// The recogniser decides only the csv_succeeded shape; everything else is undecidable offline.
func TestDecideRisk(t *testing.T) {
	st := &State{CSVs: []CSV{
		{Namespace: "nvidia-gpu-operator", Name: "gpu-operator-certified.v25.3.1", Phase: "Succeeded"},
		{Namespace: "x", Name: "failing-op.v1.0.0", Phase: "Failed"},
	}}
	cases := []struct {
		name, query string
		rules       []MatchingRule
		want        Decision
	}{
		{"graph-data shape", "group(csv_succeeded{_id=\"\",name=~\"gpu-operator-certified[.].*\"})\nor\n0 * group(csv_count{_id=\"\"})", nil, Applies},
		{"without fallback", `group(csv_succeeded{name=~"gpu-operator-certified[.].*"})`, nil, Applies},
		{"exact name", `group(csv_succeeded{_id="",name="gpu-operator-certified.v25.3.1"})`, nil, Applies},
		{"regex is anchored", `group(csv_succeeded{_id="",name=~"operator-certified.*"})`, nil, NotApplies},
		{"not succeeded", `group(csv_succeeded{_id="",name=~"failing-op.*"})`, nil, NotApplies},
		{"other metric", `cluster_infrastructure_provider{_id="",type="BareMetal"}`, nil, Undecidable},
		{"csv with another label", `group(csv_succeeded{_id="",name=~"gpu.*",namespace="x"})`, nil, Undecidable},
		{"Always", "", []MatchingRule{{Type: "Always"}}, Applies},
		{"unknown type skipped", "", []MatchingRule{{Type: "Future"}, {Type: "Always"}}, Applies},
		{"only unknown types", "", []MatchingRule{{Type: "Future"}}, Undecidable},
	}
	for _, tc := range cases {
		rules := tc.rules
		if rules == nil {
			rules = []MatchingRule{{Type: "PromQL", PromQL: &PromQLRule{PromQL: tc.query}}}
		}
		v := decideRisk(Risk{Name: "R", URL: "u", MatchingRules: rules}, st)
		if v.Decision != tc.want || v.Source == "" {
			t.Errorf("%s: %s (%s), want %s", tc.name, v.Decision, v.Source, tc.want)
		}
	}
}
