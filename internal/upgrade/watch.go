package upgrade

import (
	"context"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
)

// watcher reads the cluster every Poll and judges it against the thresholds. What it has seen
// (since when a node has been draining) lives in memory: a resumed run starts those clocks again;
// the node transitions it sees are journaled as they happen (transitions.go).
type watcher struct {
	r    *runner
	seen map[string]time.Time
	// last is each node's config when last seen Done; moved lists the configs each node was
	// seen Done on after that, with when (the per-node transition times the close step journals);
	// restored and late are per node: its journaled record read, its baseline a killed run's.
	last     map[string]string
	moved    map[string][]Transition
	restored map[string]bool
	late     map[string]bool
	// prior is the trip the hop last stopped on (journaled by a run before this one), priorSeen
	// when this run first found its condition still there (retry.go).
	prior     *tripRecord
	priorSeen time.Time
}

// until polls until done says so, stopping with a *Trip when a threshold is passed.
func (w *watcher) until(ctx context.Context, what string, done func(v *View) (bool, string)) (*View, error) {
	t := time.NewTicker(w.r.o.Poll)
	defer t.Stop()
	last := ""
	for {
		v, err := ReadView(ctx, w.r.c, w.r.o.Now())
		if err != nil {
			return nil, err
		}
		if err := w.note(v); err != nil {
			return v, err
		}
		if trip := w.judge(ctx, v); trip != nil {
			return v, trip
		}
		ok, msg := done(v)
		if ok {
			return v, nil
		}
		if msg != last {
			w.r.say("%s: waiting for %s: %s", w.r.o.Hop.To, what, msg)
			last = msg
		}
		select {
		case <-ctx.Done():
			return v, ctx.Err()
		case <-t.C:
		}
	}
}

// judge applies the thresholds (see Thresholds) to one view.
func (w *watcher) judge(ctx context.Context, v *View) *Trip {
	if t := judgeCV(v.CV.Conditions); t != nil {
		t.Image = v.CV.Desired.Image
		if t = w.again(t, v); t != nil {
			return t
		}
	}
	for _, o := range v.Operators {
		if t := judgeOperator(o, w.r.o.Hop.To, w.r.o.Thresholds, v.At); t != nil {
			return t
		}
	}
	for _, n := range v.Nodes {
		if n.State == "Degraded" {
			return &Trip{Kind: TripPoolDegraded, Object: "Node/" + n.Name,
				Cause: fmt.Sprintf("the machine-config daemon reports Degraded: %s", n.Reason),
				Fix:   "read the daemon's log on the node (oc logs -n openshift-machine-config-operator -c machine-config-daemon <pod on " + n.Name + ">), fix the node, then resume"}
		}
		if n.State != "Working" || n.Desired == n.Current {
			continue
		}
		k := n.Name + " " + n.Desired
		first, ok := w.seen[k]
		if !ok {
			w.seen[k] = v.At
			continue
		}
		if v.At.Sub(first) >= w.r.o.Thresholds.Drain {
			return w.drainTrip(ctx, n, v.At.Sub(first))
		}
	}
	for _, p := range v.Pools {
		if c := cond(p.Conditions, "Degraded"); c.Status == "True" {
			return &Trip{Kind: TripPoolDegraded, Object: "MachineConfigPool/" + p.Name, Since: c.Since,
				Cause: fmt.Sprintf("Degraded=True (%s): %s", c.Reason, c.Message),
				Fix:   "fix the degraded node the message names, then resume"}
		}
	}
	return nil
}

// drainTrip explains a node that has not finished its drain: a PodDisruptionBudget allowing no
// disruption with a pod on the node, when there is one, else the daemon's reason.
func (w *watcher) drainTrip(ctx context.Context, n NodeView, for_ time.Duration) *Trip {
	t := &Trip{Kind: TripDrainBlocked, Object: "Node/" + n.Name,
		Cause: fmt.Sprintf("has not drained for %s, over the %s threshold (%s)", round(for_), w.r.o.Thresholds.Drain, n.Reason),
		Fix:   "find the pod that cannot be evicted (oc adm drain " + n.Name + " --dry-run=server), move or relax it, then resume"}
	pdbs, err := w.r.c.List(ctx, "policy/v1", "PodDisruptionBudget", "", "")
	if err != nil {
		return t
	}
	for i := range pdbs {
		p := &pdbs[i]
		if allowed, _, _ := unstructured.NestedInt64(p.Object, "status", "disruptionsAllowed"); allowed != 0 {
			continue
		}
		ml, _, _ := unstructured.NestedStringMap(p.Object, "spec", "selector", "matchLabels")
		pods, err := w.r.c.List(ctx, "v1", "Pod", p.GetNamespace(), labels.SelectorFromSet(ml).String())
		if err != nil {
			continue
		}
		for _, pod := range pods {
			if on, _, _ := unstructured.NestedString(pod.Object, "spec", "nodeName"); on == n.Name {
				t.Object = "PodDisruptionBudget " + p.GetNamespace() + "/" + p.GetName()
				t.Cause = fmt.Sprintf("allows 0 disruptions: node %s cannot drain (pod %s has not been evicted for %s)", n.Name, pod.GetName(), round(for_))
				t.Fix = "scale the workload up or relax the budget so one pod may go, then resume; the remaining pools stay paused"
				return t
			}
		}
	}
	return t
}

func (r *runner) controlPlane(ctx context.Context) (any, error) {
	to := r.o.Hop.To
	v, err := r.w.until(ctx, "the control plane at "+to, func(v *View) (bool, string) {
		if len(v.CV.History) == 0 || v.CV.History[0].Version != to || v.CV.History[0].State != "Completed" {
			h := "no history"
			if len(v.CV.History) > 0 {
				h = v.CV.History[0].Version + " " + v.CV.History[0].State
			}
			return false, "ClusterVersion history: " + h
		}
		var behind []string
		for _, o := range v.Operators {
			if o.Version != to {
				behind = append(behind, o.Name)
			}
		}
		if len(behind) > 0 {
			return false, "operators not at " + to + ": " + strings.Join(behind, ", ")
		}
		if m := v.Pool("master"); m != nil && !m.Done() {
			return false, fmt.Sprintf("master pool %d/%d updated", m.Updated, m.Machines)
		}
		return true, ""
	})
	if err != nil {
		return nil, err
	}
	return map[string]any{"history": v.CV.History[0], "operators": len(v.Operators), "at": v.At.UTC()}, nil
}

// canaryNode is the node the canary step labelled ("" when the cluster has no worker).
func (r *runner) canaryNode() string {
	var c struct{ Node string }
	r.j.Done(r.key(StepCanary), &c)
	return c.Node
}

func (r *runner) canaryDone(ctx context.Context) (any, error) {
	node := r.canaryNode()
	if node == "" {
		return map[string]string{"skipped": "no canary"}, nil
	}
	var ev NodeView
	_, err := r.w.until(ctx, "the canary node "+node, func(v *View) (bool, string) {
		p := v.Pool(r.o.CanaryPool)
		for _, n := range v.Nodes {
			if n.Name == node {
				ev = n
			}
		}
		if p == nil || !p.Done() || ev.Current != ev.Desired || ev.State != "Done" || p.RenderedSpec != ev.Current {
			return false, fmt.Sprintf("node %s state %q current %q desired %q", node, ev.State, ev.Current, ev.Desired)
		}
		return true, ""
	})
	if err != nil {
		return nil, err
	}
	var c struct{ OSImage string }
	r.j.Done(r.key(StepCanary), &c)
	return r.evidence(ctx, node, ev.Current, c.OSImage)
}

func (r *runner) soak(ctx context.Context) (any, error) {
	start := r.o.Now()
	_, err := r.w.until(ctx, "the soak", func(v *View) (bool, string) {
		left := r.o.Soak - v.At.Sub(start)
		return left <= 0, fmt.Sprintf("%s left", left.Round(time.Second))
	})
	return map[string]any{"soak": r.o.Soak.String()}, err
}

func (r *runner) workers(ctx context.Context) (any, error) {
	_, err := r.w.until(ctx, "every pool updated", func(v *View) (bool, string) {
		for _, p := range v.Pools {
			if !p.Done() {
				return false, fmt.Sprintf("MachineConfigPool/%s %d/%d updated", p.Name, p.Updated, p.Machines)
			}
		}
		return true, ""
	})
	return nil, err
}
