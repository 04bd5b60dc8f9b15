package upgrade

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// ParsePlan reads a plan file as `bootstrap upgrade plan -o json > plan.json` writes it: JSON
// lines whose last is the command's result ({"kind":"result",...,"data":<the plan>}), or the
// plan object alone (what a program that read the result's data keeps). Anything else, or a plan
// without hops, is refused with the command that writes one.
func ParsePlan(b []byte) (*Plan, error) {
	data := bytes.TrimSpace(b)
	last := data
	if i := bytes.LastIndexByte(data, '\n'); i >= 0 {
		last = data[i+1:]
	}
	var res struct {
		Kind     string          `json:"kind"`
		ExitCode int             `json:"exitCode"`
		Error    string          `json:"error"`
		Data     json.RawMessage `json:"data"`
	}
	if json.Unmarshal(last, &res) == nil && res.Kind == "result" {
		if len(res.Data) == 0 || string(res.Data) == "null" {
			return nil, fmt.Errorf("the plan command's result holds no plan (exit %d: %s): plan again with bootstrap upgrade plan --to VERSION -o json > plan.json", res.ExitCode, res.Error)
		}
		data = res.Data
	}
	var p Plan
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("not a plan (%v): write it with bootstrap upgrade plan --to VERSION -o json > plan.json", err)
	}
	if len(p.Hops) == 0 {
		return nil, fmt.Errorf("not a plan with hops: write it with bootstrap upgrade plan --to VERSION -o json > plan.json")
	}
	return &p, nil
}
