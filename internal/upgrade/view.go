package upgrade

import (
	"context"
	"fmt"
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/bootstrap-dev/bootstrap/internal/cluster"
)

// The MCO's node annotations (machine-config-operator pkg/daemon/constants), read to follow
// each node's update: the rendered config it runs, the one it is asked to run, and the
// daemon's state (Done, Working, Degraded) with its reason.
const (
	AnnCurrentConfig = "machineconfiguration.openshift.io/currentConfig"
	AnnDesiredConfig = "machineconfiguration.openshift.io/desiredConfig"
	AnnState         = "machineconfiguration.openshift.io/state"
	AnnReason        = "machineconfiguration.openshift.io/reason"
)

// Refs of the objects the upgrade reads and writes.
var (
	ClusterVersionRef = cluster.Ref{APIVersion: "config.openshift.io/v1", Kind: "ClusterVersion", Name: "version"}
)

// View is the cluster as the upgrade watches it: one read of every object that matters.
type View struct {
	At        time.Time
	CV        CVView
	Operators []OperatorView
	Pools     []PoolView
	Nodes     []NodeView
}

// CVView is the ClusterVersion.
type CVView struct {
	Desired       DesiredUpdate // spec.desiredUpdate (zero when unset)
	StatusDesired string        // status.desired.version
	History       []HistoryEntry
	Conditions    []Cond
}

// DesiredUpdate is ClusterVersion spec.desiredUpdate as we set it: version and image by digest.
type DesiredUpdate struct {
	Version string `json:"version,omitempty"`
	Image   string `json:"image,omitempty"`
	Force   bool   `json:"force,omitempty"`
}

// PoolView is a MachineConfigPool.
type PoolView struct {
	Name         string
	Paused       bool
	PausedBy     string            // AnnPausedBy: the hop that paused it
	Selector     map[string]string // spec.nodeSelector.matchLabels
	MaxUnav      string
	Machines     int64
	Updated      int64
	Degraded     int64
	Conditions   []Cond
	RenderedSpec string // spec.configuration.name
}

// NodeView is a node with its MCO annotations.
type NodeView struct {
	Name    string
	Labels  map[string]string
	Ready   Cond
	Current string
	Desired string
	State   string
	Reason  string
	OSImage string
	Unsched bool
}

func condsOf(u *unstructured.Unstructured, path ...string) []Cond {
	raw, _, _ := unstructured.NestedSlice(u.Object, path...)
	var out []Cond
	for _, r := range raw {
		m, ok := r.(map[string]any)
		if !ok {
			continue
		}
		s := func(k string) string { v, _ := m[k].(string); return v }
		c := Cond{Type: s("type"), Status: s("status"), Reason: s("reason"), Message: s("message")}
		if t, err := time.Parse(time.RFC3339, s("lastTransitionTime")); err == nil {
			c.Since = t
		}
		out = append(out, c)
	}
	return out
}

// ReadView reads the ClusterVersion, the ClusterOperators, the pools and the nodes.
func ReadView(ctx context.Context, c *cluster.Client, now time.Time) (*View, error) {
	v := &View{At: now}
	cv, err := c.Get(ctx, ClusterVersionRef)
	if err != nil {
		return nil, fmt.Errorf("read ClusterVersion: %w", err)
	}
	v.CV.Desired.Version, _, _ = unstructured.NestedString(cv.Object, "spec", "desiredUpdate", "version")
	v.CV.Desired.Image, _, _ = unstructured.NestedString(cv.Object, "spec", "desiredUpdate", "image")
	v.CV.Desired.Force, _, _ = unstructured.NestedBool(cv.Object, "spec", "desiredUpdate", "force")
	v.CV.StatusDesired, _, _ = unstructured.NestedString(cv.Object, "status", "desired", "version")
	v.CV.Conditions = condsOf(cv, "status", "conditions")
	hist, _, _ := unstructured.NestedSlice(cv.Object, "status", "history")
	for _, h := range hist {
		m, _ := h.(map[string]any)
		s := func(k string) string { x, _ := m[k].(string); return x }
		verified, _ := m["verified"].(bool)
		v.CV.History = append(v.CV.History, HistoryEntry{State: s("state"), Version: s("version"), Image: s("image"), Verified: verified})
	}
	cos, err := c.List(ctx, "config.openshift.io/v1", "ClusterOperator", "", "")
	if err != nil {
		return nil, err
	}
	for i := range cos {
		o := OperatorView{Name: cos[i].GetName(), Conditions: condsOf(&cos[i], "status", "conditions")}
		vs, _, _ := unstructured.NestedSlice(cos[i].Object, "status", "versions")
		for _, x := range vs {
			if m, ok := x.(map[string]any); ok && m["name"] == "operator" {
				o.Version, _ = m["version"].(string)
			}
		}
		v.Operators = append(v.Operators, o)
	}
	pools, err := c.List(ctx, "machineconfiguration.openshift.io/v1", "MachineConfigPool", "", "")
	if err != nil {
		return nil, err
	}
	for i := range pools {
		u := &pools[i]
		p := PoolView{Name: u.GetName(), Conditions: condsOf(u, "status", "conditions")}
		p.Paused, _, _ = unstructured.NestedBool(u.Object, "spec", "paused")
		p.PausedBy = u.GetAnnotations()[AnnPausedBy]
		p.Selector, _, _ = unstructured.NestedStringMap(u.Object, "spec", "nodeSelector", "matchLabels")
		p.RenderedSpec, _, _ = unstructured.NestedString(u.Object, "spec", "configuration", "name")
		if mu, ok, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "maxUnavailable"); ok {
			p.MaxUnav = fmt.Sprint(mu)
		}
		p.Machines, _, _ = unstructured.NestedInt64(u.Object, "status", "machineCount")
		p.Updated, _, _ = unstructured.NestedInt64(u.Object, "status", "updatedMachineCount")
		p.Degraded, _, _ = unstructured.NestedInt64(u.Object, "status", "degradedMachineCount")
		v.Pools = append(v.Pools, p)
	}
	nodes, err := c.List(ctx, "v1", "Node", "", "")
	if err != nil {
		return nil, err
	}
	for i := range nodes {
		u := &nodes[i]
		a := u.GetAnnotations()
		n := NodeView{Name: u.GetName(), Labels: u.GetLabels(), Current: a[AnnCurrentConfig], Desired: a[AnnDesiredConfig],
			State: a[AnnState], Reason: a[AnnReason], Ready: cond(condsOf(u, "status", "conditions"), "Ready")}
		n.OSImage, _, _ = unstructured.NestedString(u.Object, "status", "nodeInfo", "osImage")
		n.Unsched, _, _ = unstructured.NestedBool(u.Object, "spec", "unschedulable")
		v.Nodes = append(v.Nodes, n)
	}
	sort.Slice(v.Nodes, func(i, j int) bool { return v.Nodes[i].Name < v.Nodes[j].Name })
	return v, nil
}

// Pool returns the named pool, nil when there is none.
func (v *View) Pool(name string) *PoolView {
	for i := range v.Pools {
		if v.Pools[i].Name == name {
			return &v.Pools[i]
		}
	}
	return nil
}

// PoolNodes are the nodes a pool's matchLabels select.
func (v *View) PoolNodes(p *PoolView) []NodeView {
	var out []NodeView
	for _, n := range v.Nodes {
		if len(p.Selector) > 0 && matches(p.Selector, n.Labels) {
			out = append(out, n)
		}
	}
	return out
}

func matches(sel, labels map[string]string) bool {
	for k, want := range sel {
		if got, ok := labels[k]; !ok || got != want {
			return false
		}
	}
	return true
}

// PoolDone is the pool's Updated=True with every machine updated and none degraded.
func (p *PoolView) Done() bool {
	return cond(p.Conditions, "Updated").Status == "True" && p.Updated == p.Machines && p.Degraded == 0
}
