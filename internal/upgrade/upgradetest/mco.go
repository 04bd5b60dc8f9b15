package upgradetest

import (
	"context"
	"fmt"
	"reflect"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/bootstrap-dev/bootstrap/internal/cluster/clustertest"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade"
)

// drainTicks is how many reconciles a drain and reboot take.
const drainTicks = 3

// poolOf is the pool a node belongs to, as the MCO decides it: a custom pool whose node
// selector matches wins over worker; master nodes are master's.
func poolOf(node *unstructured.Unstructured, pools []unstructured.Unstructured) *unstructured.Unstructured {
	var worker, master *unstructured.Unstructured
	for i := range pools {
		p := &pools[i]
		sel, _, _ := unstructured.NestedStringMap(p.Object, "spec", "nodeSelector", "matchLabels")
		if len(sel) == 0 || !selects(sel, node.GetLabels()) {
			continue
		}
		switch p.GetName() {
		case "worker":
			worker = p
		case "master":
			master = p
		default:
			return p
		}
	}
	if master != nil {
		return master
	}
	return worker
}

func selects(sel, l map[string]string) bool {
	for k, v := range sel {
		if got, ok := l[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// mco rolls each pool's nodes to its rendered config, maxUnavailable at a time, never while
// the pool is paused, and writes the pools' status.
func (s *Sim) mco(ctx context.Context) error {
	mcps := s.D.Resource(clustertest.MachineConfigPools)
	nodesR := s.D.Resource(clustertest.Nodes)
	pl, err := mcps.List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	nl, err := nodesR.List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	members := map[string][]*unstructured.Unstructured{}
	for i := range nl.Items {
		n := &nl.Items[i]
		if p := poolOf(n, pl.Items); p != nil {
			members[p.GetName()] = append(members[p.GetName()], n)
		}
	}
	for i := range pl.Items {
		p := &pl.Items[i]
		rendered, _, _ := unstructured.NestedString(p.Object, "spec", "configuration", "name")
		paused, _, _ := unstructured.NestedBool(p.Object, "spec", "paused")
		ns := members[p.GetName()]
		maxUnav := maxUnavailable(p, len(ns))
		if rendered == "" && len(ns) > 0 { // a new pool: the MCO renders it at once
			rendered = strings.Replace(ann(ns[0], upgrade.AnnCurrentConfig), "rendered-worker-", "rendered-"+p.GetName()+"-", 1)
			_ = unstructured.SetNestedField(p.Object, rendered, "spec", "configuration", "name")
			if p, err = mcps.Update(ctx, p, metav1.UpdateOptions{}); apierrors.IsNotFound(err) {
				continue // deleted since the list (the close step removes the canary pool)
			} else if err != nil {
				return err
			}
		}
		working := int64(0)
		for _, n := range ns {
			if ann(n, upgrade.AnnDesiredConfig) != ann(n, upgrade.AnnCurrentConfig) {
				working++
			}
		}
		var updated, degraded int64
		for _, n := range ns {
			if err := s.node(ctx, n, rendered, paused, &working, maxUnav); err != nil {
				return err
			}
			switch {
			case ann(n, upgrade.AnnState) == "Degraded":
				degraded++
			case ann(n, upgrade.AnnCurrentConfig) == rendered && ann(n, upgrade.AnnState) == "Done":
				updated++
			}
		}
		if err := s.poolStatus(ctx, p, rendered, int64(len(ns)), updated, degraded); err != nil && !apierrors.IsNotFound(err) {
			return err // a pool deleted since the list is gone from the MCO's work, as in the real one
		}
	}
	return nil
}

func ann(u *unstructured.Unstructured, k string) string { return u.GetAnnotations()[k] }

// maxUnavailable reads spec.maxUnavailable as the MCO does: an int or a percent of the pool's
// nodes rounded down, unset or below one meaning one.
func maxUnavailable(p *unstructured.Unstructured, nodes int) int64 {
	raw, ok, _ := unstructured.NestedFieldNoCopy(p.Object, "spec", "maxUnavailable")
	if !ok {
		return 1
	}
	var v intstr.IntOrString
	switch x := raw.(type) {
	case int64:
		v = intstr.FromInt32(int32(x))
	case string:
		v = intstr.FromString(x)
	default:
		return 1
	}
	m, err := intstr.GetScaledValueFromIntOrPercent(&v, nodes, false)
	if err != nil || m < 1 {
		return 1
	}
	return int64(m)
}

// node moves one node one step: asked to update (when its pool is not paused and fewer than
// maxUnavailable nodes are updating), draining (held by a PodDisruptionBudget), rebooted.
func (s *Sim) node(ctx context.Context, n *unstructured.Unstructured, rendered string, paused bool, working *int64, maxUnav int64) error {
	a := n.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	before := map[string]string{}
	for k, v := range a {
		before[k] = v
	}
	cur, des := a[upgrade.AnnCurrentConfig], a[upgrade.AnnDesiredConfig]
	switch {
	case cur == des && cur != rendered && rendered != "" && !paused && *working < maxUnav:
		a[upgrade.AnnDesiredConfig], a[upgrade.AnnState], a[upgrade.AnnReason] = rendered, "Working", ""
		*working++
	case cur != des && a[upgrade.AnnState] == "Working":
		if n.GetName() == s.Faults.DegradedNode && versionOf(des) != versionOf(cur) { // on the update, not on joining the canary pool
			a[upgrade.AnnState] = "Degraded"
			a[upgrade.AnnReason] = fmt.Sprintf("unexpected on-disk state validating against %s: content mismatch for file \"/etc/modprobe.d/irdma-blacklist.conf\"", des)
			break
		}
		why, err := s.blocked(ctx, n.GetName())
		if err != nil {
			return err
		}
		if why != "" {
			a[upgrade.AnnReason] = why
			break
		}
		s.drain[n.GetName()]++
		if s.drain[n.GetName()] >= drainTicks {
			s.drain[n.GetName()] = 0
			a[upgrade.AnnCurrentConfig], a[upgrade.AnnState], a[upgrade.AnnReason] = des, "Done", ""
			*working--
		}
	}
	if reflect.DeepEqual(a, before) {
		return nil
	}
	n.SetAnnotations(a)
	out, err := s.D.Resource(clustertest.Nodes).Update(ctx, n, metav1.UpdateOptions{})
	if err != nil {
		return err
	}
	*n = *out
	if a[upgrade.AnnState] == "Done" && before[upgrade.AnnState] != "Done" {
		v := des[strings.LastIndex(des, "-")+1:]
		if l := n.GetLabels(); l[upgrade.LabelOSBuild] != OSBuild(v) { // NFD relabels the rebooted node
			l[upgrade.LabelOSBuild] = OSBuild(v)
			n.SetLabels(l)
			if out, err = s.D.Resource(clustertest.Nodes).Update(ctx, n, metav1.UpdateOptions{}); err != nil {
				return err
			}
			*n = *out
		}
		_ = unstructured.SetNestedField(n.Object, osImage(v), "status", "nodeInfo", "osImage")
		out, err = s.D.Resource(clustertest.Nodes).UpdateStatus(ctx, n, metav1.UpdateOptions{})
		if err == nil {
			*n = *out
		}
	}
	return err
}

func (s *Sim) poolStatus(ctx context.Context, p *unstructured.Unstructured, rendered string, count, updated, degraded int64) error {
	now := s.now()
	conds, _, _ := unstructured.NestedSlice(p.Object, "status", "conditions")
	old := fmt.Sprint(conds)
	done := updated == count && rendered != ""
	st := map[bool]string{true: "True", false: "False"}
	conds = setCond(conds, condition("Updated", st[done], "", fmt.Sprintf("%d of %d updated", updated, count), now))
	conds = setCond(conds, condition("Updating", st[!done && degraded == 0], "", "", now))
	msg := ""
	if degraded > 0 {
		msg = fmt.Sprintf("%d nodes are reporting degraded status on sync", degraded)
	}
	conds = setCond(conds, condition("NodeDegraded", st[degraded > 0], "", msg, now))
	conds = setCond(conds, condition("Degraded", st[degraded > 0], "", msg, now))
	statusCfg, _, _ := unstructured.NestedString(p.Object, "status", "configuration", "name")
	if done {
		statusCfg = rendered
	}
	prev := []any{p.Object["status"]}
	mc, _, _ := unstructured.NestedInt64(p.Object, "status", "machineCount")
	uc, _, _ := unstructured.NestedInt64(p.Object, "status", "updatedMachineCount")
	dc, _, _ := unstructured.NestedInt64(p.Object, "status", "degradedMachineCount")
	oldCfg, _, _ := unstructured.NestedString(p.Object, "status", "configuration", "name")
	if mc == count && uc == updated && dc == degraded && oldCfg == statusCfg && old == fmt.Sprint(conds) && prev[0] != nil {
		return nil
	}
	status := map[string]any{"machineCount": count, "updatedMachineCount": updated, "readyMachineCount": updated,
		"unavailableMachineCount": count - updated, "degradedMachineCount": degraded, "conditions": conds,
		"observedGeneration": p.GetGeneration()}
	if statusCfg != "" {
		status["configuration"] = map[string]any{"name": statusCfg}
	}
	p.Object["status"] = status
	_, err := s.D.Resource(clustertest.MachineConfigPools).UpdateStatus(ctx, p, metav1.UpdateOptions{})
	return err
}

// versionOf is the version a simulated rendered config name ends with.
func versionOf(rendered string) string { return rendered[strings.LastIndex(rendered, "-")+1:] }

// osImage is a node's status.nodeInfo.osImage at a version, as RHCOS writes it.
func osImage(version string) string {
	return "Red Hat Enterprise Linux CoreOS " + OSBuild(version) + " (Plow)"
}
