package upgrade

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/bootstrap-dev/bootstrap/internal/cluster"
)

// InstallPlans is what an approval pass did: the InstallPlans approved, and those left waiting
// with why (a CSV the plan does not name).
type InstallPlans struct {
	Approved []string `json:"approved,omitempty"` // namespace/name: csv, ...
	Left     []string `json:"left,omitempty"`     // namespace/name: why
	// Found are those approved before this pass whose every CSV the plan names (by a run killed
	// before it journaled the approval, or by a person): not approved twice.
	Found []string `json:"alreadyApproved,omitempty"`
}

// CSVs are the CSV names the hop's operator steps install: before the hop (Before) or after it.
func (h Hop) CSVs(before bool) []string {
	steps := h.After
	if before {
		steps = h.Before
	}
	var out []string
	for _, s := range steps {
		if s.CSV != "" {
			out = append(out, s.CSV)
		}
	}
	sort.Strings(out)
	return out
}

// ApproveInstallPlans approves the InstallPlans waiting for a manual approval whose every
// spec.clusterServiceVersionNames entry is a CSV in csvs; any other waiting InstallPlan stays
// unapproved and is named with the CSVs the plan does not name. OLM bundles the updates a
// subscription can take into one InstallPlan, so approving a plan with one unplanned CSV would
// install an operator version nobody checked against the next minor.
func ApproveInstallPlans(ctx context.Context, c *cluster.Client, csvs []string) (*InstallPlans, error) {
	want := map[string]bool{}
	for _, n := range csvs {
		want[n] = true
	}
	ips, err := c.List(ctx, "operators.coreos.com/v1alpha1", "InstallPlan", "", "")
	if err != nil {
		return nil, fmt.Errorf("list InstallPlans: %w", err)
	}
	sort.Slice(ips, func(i, j int) bool {
		return ips[i].GetNamespace()+"/"+ips[i].GetName() < ips[j].GetNamespace()+"/"+ips[j].GetName()
	})
	res := &InstallPlans{}
	for i := range ips {
		ip := &ips[i]
		approval, _, _ := unstructured.NestedString(ip.Object, "spec", "approval")
		approved, _, _ := unstructured.NestedBool(ip.Object, "spec", "approved")
		if approval != "Manual" {
			continue
		}
		names, _, _ := unstructured.NestedStringSlice(ip.Object, "spec", "clusterServiceVersionNames")
		id := ip.GetNamespace() + "/" + ip.GetName()
		var other []string
		for _, n := range names {
			if !want[n] {
				other = append(other, n)
			}
		}
		if approved {
			if len(names) > 0 && len(other) == 0 {
				res.Found = append(res.Found, id+": "+strings.Join(names, ", "))
			}
			continue
		}
		if len(names) == 0 || len(other) > 0 {
			why := "no CSV named"
			if len(other) > 0 {
				why = "CSVs the plan does not name: " + strings.Join(other, ", ")
			}
			res.Left = append(res.Left, id+": "+why)
			continue
		}
		ref := cluster.Ref{APIVersion: "operators.coreos.com/v1alpha1", Kind: "InstallPlan", Namespace: ip.GetNamespace(), Name: ip.GetName()}
		if _, err := c.Patch(ctx, ref, []byte(`{"spec":{"approved":true}}`)); err != nil {
			return res, fmt.Errorf("approve InstallPlan %s: %w", id, err)
		}
		res.Approved = append(res.Approved, id+": "+strings.Join(names, ", "))
	}
	return res, nil
}
