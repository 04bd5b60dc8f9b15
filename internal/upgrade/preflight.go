package upgrade

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/bootstrap-dev/bootstrap/internal/cluster"
)

// Finding is one preflight result with the object it was read from.
type Finding struct {
	Check   string `json:"check"`
	Object  string `json:"object"`
	Result  string `json:"result"` // pass, warn, fail
	Message string `json:"message"`
}

// Results of a Finding.
const (
	Pass = "pass"
	Warn = "warn"
	Fail = "fail"
)

// PreflightOptions are what preflight needs besides the cluster.
type PreflightOptions struct {
	// CanaryPool is our canary pool's name: it may be paused or hold one node without a failure.
	CanaryPool string
	// Paused names pools that the run paused itself (a resumed run): not a failure.
	Paused []string
	// Acks are the admin-ack keys the plan says the hop needs.
	Acks []string
	// Hops are the hops whose release signatures are verified offline against the cluster's own
	// verifier keys, looked up in Signatures (the ConfigMaps the run will apply) and in the
	// cluster's signature ConfigMaps; none: not checked.
	Hops       []Hop
	Signatures []*unstructured.Unstructured
}

// Failed says whether any finding failed.
func Failed(fs []Finding) bool {
	for _, f := range fs {
		if f.Result == Fail {
			return true
		}
	}
	return false
}

// Preflight reads, never writes: the ClusterVersion (Available, not Failing, not Progressing,
// Upgradeable), every ClusterOperator (Available, not Degraded, Upgradeable), the admin-acks
// the hop needs, the pools (updated, not degraded, not paused except by us), the nodes (Ready),
// PodDisruptionBudgets that allow no disruption (they will block a drain), the
// MachineHealthChecks (listed: pause them so a rebooting node is not remediated), and, for
// o.Hops, each release's signature verified offline against the cluster's own verifier keys.
func Preflight(ctx context.Context, c *cluster.Client, v *View, o PreflightOptions) ([]Finding, error) {
	var fs []Finding
	add := func(check, obj, res, format string, a ...any) {
		fs = append(fs, Finding{Check: check, Object: obj, Result: res, Message: fmt.Sprintf(format, a...)})
	}
	cvObj := "ClusterVersion/version"
	for _, want := range []struct {
		typ, ok string
	}{{"Available", "True"}, {"Failing", "False"}, {"Progressing", "False"}} {
		c := cond(v.CV.Conditions, want.typ)
		res := Pass
		if c.Status != want.ok {
			res = Fail
		}
		add("cluster-version", cvObj, res, "%s=%s %s", want.typ, c.Status, strings.TrimSpace(c.Reason+" "+c.Message))
	}
	if c := cond(v.CV.Conditions, "Upgradeable"); c.Status == "False" {
		add("upgradeable", cvObj, Fail, "Upgradeable=False (%s): %s — the CVO refuses a minor update until it clears", c.Reason, c.Message)
	}
	for _, op := range v.Operators {
		obj := "ClusterOperator/" + op.Name
		av, dg := cond(op.Conditions, "Available"), cond(op.Conditions, "Degraded")
		switch {
		case av.Status != "True":
			add("operator", obj, Fail, "Available=%s (%s): %s", av.Status, av.Reason, av.Message)
		case dg.Status == "True":
			add("operator", obj, Fail, "Degraded=True (%s): %s", dg.Reason, dg.Message)
		default:
			add("operator", obj, Pass, "available, not degraded, version %s", op.Version)
		}
		if u := cond(op.Conditions, "Upgradeable"); u.Status == "False" {
			add("upgradeable", obj, Fail, "Upgradeable=False (%s): %s", u.Reason, u.Message)
		}
	}
	if err := adminAcks(ctx, c, o.Acks, add); err != nil {
		return nil, err
	}
	if len(o.Hops) > 0 {
		sf, err := signatureFindings(ctx, c, o.Hops, o.Signatures)
		if err != nil {
			return nil, err
		}
		fs = append(fs, sf...)
	}
	for i := range v.Pools {
		p := &v.Pools[i]
		obj := "MachineConfigPool/" + p.Name
		ours := p.Name == o.CanaryPool || contains(o.Paused, p.Name)
		switch {
		case p.Degraded > 0 || cond(p.Conditions, "Degraded").Status == "True":
			add("pool", obj, Fail, "degraded (%d machine(s)): %s", p.Degraded, cond(p.Conditions, "Degraded").Message)
		case p.Paused && !ours:
			add("pool", obj, Fail, "paused by someone else: unpause it (oc patch mcp %s --type merge -p '{\"spec\":{\"paused\":false}}') or say why", p.Name)
		case !p.Done() && !ours:
			add("pool", obj, Fail, "not updated: %d of %d machines updated", p.Updated, p.Machines)
		default:
			add("pool", obj, Pass, "%d of %d machines updated, paused=%t", p.Updated, p.Machines, p.Paused)
		}
	}
	for _, n := range v.Nodes {
		if n.Ready.Status != "True" {
			add("node", "Node/"+n.Name, Fail, "not Ready (%s): %s", n.Ready.Reason, n.Ready.Message)
		} else {
			add("node", "Node/"+n.Name, Pass, "Ready, MCO state %q", n.State)
		}
	}
	pdbs, err := c.List(ctx, "policy/v1", "PodDisruptionBudget", "", "")
	if err != nil {
		return nil, err
	}
	for i := range pdbs {
		if allowed, _, _ := unstructured.NestedInt64(pdbs[i].Object, "status", "disruptionsAllowed"); allowed == 0 {
			add("pdb", "PodDisruptionBudget "+pdbs[i].GetNamespace()+"/"+pdbs[i].GetName(), Warn,
				"allows 0 disruptions: a node running its pods cannot drain; scale the workload or relax the budget before the hop")
		}
	}
	served, err := c.Served("machine.openshift.io/v1beta1", "MachineHealthCheck")
	if err != nil {
		return nil, err
	}
	if served {
		mhcs, err := c.List(ctx, "machine.openshift.io/v1beta1", "MachineHealthCheck", "", "")
		if err != nil {
			return nil, err
		}
		for i := range mhcs {
			add("machine-health-check", "MachineHealthCheck "+mhcs[i].GetNamespace()+"/"+mhcs[i].GetName(), Warn,
				"pause it during the hop (annotation cluster.x-k8s.io/paused) so a rebooting node is not remediated")
		}
	}
	sort.SliceStable(fs, func(i, j int) bool { return rank(fs[i].Result) > rank(fs[j].Result) })
	return fs, nil
}

func rank(r string) int {
	switch r {
	case Fail:
		return 2
	case Warn:
		return 1
	}
	return 0
}

// adminAcks checks that each admin-ack the hop needs is "true" in openshift-config/admin-acks.
func adminAcks(ctx context.Context, c *cluster.Client, keys []string, add func(check, obj, res, format string, a ...any)) error {
	if len(keys) == 0 {
		return nil
	}
	obj := "ConfigMap openshift-config/admin-acks"
	cm, err := c.Get(ctx, cluster.Ref{APIVersion: "v1", Kind: "ConfigMap", Namespace: "openshift-config", Name: "admin-acks"})
	var data map[string]string
	if err == nil {
		data, _, _ = unstructured.NestedStringMap(cm.Object, "data")
	}
	for _, k := range keys {
		if data[k] == "true" {
			add("admin-ack", obj, Pass, "%s acknowledged", k)
		} else {
			add("admin-ack", obj, Fail, "%s not acknowledged: read the gate's message, then oc -n openshift-config patch cm admin-acks --type=merge -p '{\"data\":{\"%s\":\"true\"}}'", k, k)
		}
	}
	return nil
}
