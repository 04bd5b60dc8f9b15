package upgrade

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/bootstrap-dev/bootstrap/internal/cluster"
)

// The operator updates a plan puts before and after a hop are not done when their InstallPlans
// are approved: OLM installs the bundle afterwards (it unpacks it, creates the new
// ClusterServiceVersion, which goes Succeeded once its deployments are available). The
// install-plans steps therefore approve, then wait until each planned CSV is installed, and stop
// the run (a *Trip) when one is not: no InstallPlan names it, its InstallPlan failed, or
// Thresholds.OperatorInstall passed. A hop does not start while the previous hop's "after" CSVs
// are not installed (PreviousOperators).

// Trip kinds of the operator updates.
const (
	TripOperatorMissing = "operator-update-missing" // no InstallPlan names a planned CSV
	TripOperatorFailed  = "operator-update-failed"  // its InstallPlan failed
	TripOperatorSlow    = "operator-update-not-installed"
)

// OperatorUpdates is what an install-plans step did and saw: the approval pass (InstallPlans)
// and each planned CSV as it was seen installed.
type OperatorUpdates struct {
	InstallPlans
	Installed []CSVSeen `json:"installed,omitempty"`
}

// CSVSeen is a planned CSV as the run saw it installed.
type CSVSeen struct {
	CSV          string    `json:"csv"`
	Subscription string    `json:"subscription"` // namespace/name
	Phase        string    `json:"phase"`
	At           time.Time `json:"at"`
}

// olmState is what OLM shows of the operators: Subscriptions, InstallPlans and CSVs.
type olmState struct {
	subs, ips, csvs []unstructured.Unstructured
}

func readOLM(ctx context.Context, c *cluster.Client) (*olmState, error) {
	var st olmState
	for _, k := range []struct {
		kind string
		into *[]unstructured.Unstructured
	}{{"Subscription", &st.subs}, {"InstallPlan", &st.ips}, {"ClusterServiceVersion", &st.csvs}} {
		l, err := c.List(ctx, "operators.coreos.com/v1alpha1", k.kind, "", "")
		if err != nil {
			return nil, fmt.Errorf("list %ss: %w", k.kind, err)
		}
		sort.Slice(l, func(i, j int) bool {
			return l[i].GetNamespace()+"/"+l[i].GetName() < l[j].GetNamespace()+"/"+l[j].GetName()
		})
		*k.into = l
	}
	return &st, nil
}

func str(u *unstructured.Unstructured, path ...string) string {
	s, _, _ := unstructured.NestedString(u.Object, path...)
	return s
}

// plans are the InstallPlans naming csv.
func (st *olmState) plans(csv string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for i := range st.ips {
		names, _, _ := unstructured.NestedStringSlice(st.ips[i].Object, "spec", "clusterServiceVersionNames")
		if contains(names, csv) {
			out = append(out, &st.ips[i])
		}
	}
	return out
}

// subscription is the Subscription csv belongs to: the one at it or updating to it, the one an
// InstallPlan naming it belongs to, else the one whose package starts csv's name (a bundle is
// named <package>.v<version> by convention; the longest package wins).
func (st *olmState) subscription(csv string) *unstructured.Unstructured {
	for i := range st.subs {
		if s := &st.subs[i]; str(s, "status", "installedCSV") == csv || str(s, "status", "currentCSV") == csv {
			return s
		}
	}
	for _, ip := range st.plans(csv) {
		for i := range st.subs {
			s := &st.subs[i]
			if s.GetNamespace() != ip.GetNamespace() {
				continue
			}
			for _, o := range ip.GetOwnerReferences() {
				if o.Kind == "Subscription" && o.Name == s.GetName() {
					return s
				}
			}
		}
	}
	var best *unstructured.Unstructured
	for i := range st.subs {
		s := &st.subs[i]
		if p := str(s, "spec", "name"); p != "" && strings.HasPrefix(csv, p+".") && (best == nil || len(p) > len(str(best, "spec", "name"))) {
			best = s
		}
	}
	return best
}

// installed says whether csv is installed: its Subscription's installedCSV and a CSV of that name
// in the Subscription's namespace with status.phase Succeeded.
func (st *olmState) installed(csv string) (*CSVSeen, bool) {
	s := st.subscription(csv)
	if s == nil || str(s, "status", "installedCSV") != csv {
		return nil, false
	}
	for i := range st.csvs {
		c := &st.csvs[i]
		if c.GetNamespace() == s.GetNamespace() && c.GetName() == csv && str(c, "status", "phase") == "Succeeded" {
			return &CSVSeen{CSV: csv, Subscription: s.GetNamespace() + "/" + s.GetName(), Phase: "Succeeded"}, true
		}
	}
	return nil, false
}

// operators is an install-plans step: approve the InstallPlans the plan names (before the hop,
// or after it), then wait until each planned CSV is installed. Each poll approves again, so an
// InstallPlan OLM makes after the first pass is approved too; an InstallPlan approved before
// (by a killed run) is found, not approved twice.
func (r *runner) operators(before bool) func(context.Context) (any, error) {
	return func(ctx context.Context) (any, error) {
		csvs := r.o.Hop.CSVs(before)
		res := &OperatorUpdates{}
		start := r.o.Now()
		t := time.NewTicker(r.o.Poll)
		defer t.Stop()
		seen := map[string]bool{}
		last := ""
		for {
			pass, err := ApproveInstallPlans(ctx, r.c, csvs)
			if err != nil {
				return nil, err
			}
			res.merge(pass)
			st, err := readOLM(ctx, r.c)
			if err != nil {
				return nil, err
			}
			now := r.o.Now()
			var waiting []string
			for _, csv := range csvs {
				if seen[csv] {
					continue
				}
				if s, ok := st.installed(csv); ok {
					s.At = now.UTC()
					res.Installed = append(res.Installed, *s)
					seen[csv] = true
					r.say("%s: %s installed (Subscription %s, phase %s)", r.o.Hop.To, csv, s.Subscription, s.Phase)
					continue
				}
				if trip := r.operatorTrip(st, csv, before, now.Sub(start)); trip != nil {
					return nil, trip
				}
				waiting = append(waiting, csv)
			}
			if len(waiting) == 0 {
				return res, nil
			}
			if msg := strings.Join(waiting, ", "); msg != last {
				r.say("%s: waiting for OLM to install %s", r.o.Hop.To, msg)
				last = msg
			}
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-t.C:
			}
		}
	}
}

func (res *OperatorUpdates) merge(p *InstallPlans) {
	for _, a := range p.Approved {
		if !contains(res.Approved, a) {
			res.Approved = append(res.Approved, a)
		}
	}
	for _, f := range p.Found { // approved by an earlier poll of this step: not found, approved
		if !contains(res.Approved, f) && !contains(res.Found, f) {
			res.Found = append(res.Found, f)
		}
	}
	res.Left = p.Left
}

// operatorTrip judges a planned CSV not installed yet, waited for so long: a failed InstallPlan
// stops at once; no InstallPlan naming it, or one still not done, stops once
// Thresholds.OperatorInstall has passed.
func (r *runner) operatorTrip(st *olmState, csv string, before bool, waited time.Duration) *Trip {
	when := "after"
	if before {
		when = "before"
	}
	lead := fmt.Sprintf("the plan installs %s %s hop %s, but ", csv, when, r.o.Hop.To)
	obj, at := "Subscription of "+csv+" (none found)", ""
	if s := st.subscription(csv); s != nil {
		obj = "Subscription " + s.GetNamespace() + "/" + s.GetName()
		at = fmt.Sprintf(": the Subscription (catalog %s, channel %s) is at %s (state %s)", str(s, "spec", "source"), str(s, "spec", "channel"),
			orNone(str(s, "status", "installedCSV")), orNone(str(s, "status", "state")))
	}
	resume := "then run again (bootstrap upgrade run resumes here; the next hop does not start before it is installed)"
	for _, ip := range st.plans(csv) {
		if str(ip, "status", "phase") == "Failed" {
			return &Trip{Kind: TripOperatorFailed, Object: "InstallPlan " + ip.GetNamespace() + "/" + ip.GetName(),
				Cause: lead + fmt.Sprintf("its InstallPlan failed (%s)%s", orNone(str(ip, "status", "message")), at),
				Fix:   "read the InstallPlan's conditions and the catalog operator's log (oc -n openshift-operator-lifecycle-manager logs deploy/catalog-operator), fix the bundle or its image in the mirror, delete the failed InstallPlan so OLM plans it again, " + resume}
		}
	}
	limit := r.o.Thresholds.OperatorInstall
	if waited < limit {
		return nil
	}
	ips := st.plans(csv)
	if len(ips) == 0 {
		return &Trip{Kind: TripOperatorMissing, Object: obj,
			Cause: lead + fmt.Sprintf("no InstallPlan names it after %s%s", round(waited), at),
			Fix:   "check that the Subscription's catalog carries " + csv + " on its channel (mirror the operator's package again and apply the CatalogSource) and that the Subscription follows that catalog and channel; " + resume}
	}
	ip := ips[0]
	return &Trip{Kind: TripOperatorSlow, Object: "InstallPlan " + ip.GetNamespace() + "/" + ip.GetName(),
		Cause: lead + fmt.Sprintf("it is not installed after %s, over the %s threshold (InstallPlan phase %s, approved %v)%s",
			round(waited), limit, orNone(str(ip, "status", "phase")), approvedOf(ip), at),
		Fix: "an InstallPlan left unapproved names a CSV the plan does not (the journal lists it): plan again; else read the CSV's conditions (oc -n " + ip.GetNamespace() + " get csv), " + resume}
}

func approvedOf(ip *unstructured.Unstructured) bool {
	b, _, _ := unstructured.NestedBool(ip.Object, "spec", "approved")
	return b
}

// PreviousOperators are the findings of the previous hop's "after" operator updates: a hop does
// not start while one of them is not installed (the hop's plan was checked against them).
func PreviousOperators(ctx context.Context, c *cluster.Client, prev *Hop) ([]Finding, error) {
	if prev == nil || len(prev.CSVs(false)) == 0 {
		return nil, nil
	}
	st, err := readOLM(ctx, c)
	if err != nil {
		return nil, err
	}
	var fs []Finding
	for _, csv := range prev.CSVs(false) {
		f := Finding{Check: "previous-hop-operators", Object: "ClusterServiceVersion " + csv, Result: Pass,
			Message: fmt.Sprintf("installed, as the plan puts it after hop %s", prev.To)}
		if s, ok := st.installed(csv); ok {
			f.Object = "ClusterServiceVersion " + s.Subscription + " -> " + csv
		} else {
			f.Result = Fail
			f.Message = fmt.Sprintf("not installed: the plan installs it after hop %s, before this hop (finish hop %s: bootstrap upgrade run --from hop-%s)", prev.To, prev.To, prev.To)
		}
		fs = append(fs, f)
	}
	return fs, nil
}
