package upgrade

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/bootstrap-dev/bootstrap/internal/cluster"
)

// The steps of a hop that write to the cluster: the signatures, the mirror config, the canary
// pool, the pause, spec.desiredUpdate, the unpause and the close. The watching steps are in
// watch.go, the hop's driver in run.go. Each reads the cluster before it writes and leaves
// alone what is already as it wants it: a run killed after a write and before its journal record
// resumes without writing twice.

// mirrorKinds are what the mirror-config step applies.
var mirrorKinds = map[string]bool{"ImageDigestMirrorSet": true, "ImageTagMirrorSet": true, "CatalogSource": true}

func (r *runner) mirror(ctx context.Context) (any, error) {
	for _, o := range r.o.Mirror {
		if !mirrorKinds[o.GetKind()] {
			return nil, fmt.Errorf("mirror config: %s %s is not an ImageDigestMirrorSet, ImageTagMirrorSet or CatalogSource", o.GetKind(), o.GetName())
		}
	}
	res, err := r.c.Apply(ctx, r.o.Mirror, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("apply the hop's mirror config (IDMS/ITMS/CatalogSources): %w", err)
	}
	return res, nil
}

func (r *runner) signatures(ctx context.Context) (any, error) {
	res, err := r.c.Apply(ctx, r.o.Signatures, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("apply signature ConfigMaps: %w", err)
	}
	return res, nil
}

// canary creates the canary pool (the worker configs and its own role, one node) and labels
// the canary node into it, as the documented canary rollout does.
func (r *runner) canary(ctx context.Context) (any, error) {
	v, err := ReadView(ctx, r.c, r.o.Now())
	if err != nil {
		return nil, err
	}
	node := r.o.Canary
	if node == "" {
		for _, n := range v.Nodes {
			if _, ok := n.Labels["node-role.kubernetes.io/worker"]; ok {
				if _, master := n.Labels["node-role.kubernetes.io/master"]; !master {
					node = n.Name
					break
				}
			}
		}
	}
	if node == "" {
		return map[string]string{"skipped": "no worker node: the control plane is the only pool"}, nil
	}
	role := strings.TrimPrefix(CanaryLabel, "node-role.kubernetes.io/")
	pool := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "machineconfiguration.openshift.io/v1", "kind": "MachineConfigPool",
		"metadata": map[string]any{"name": r.o.CanaryPool, "labels": map[string]any{"bootstrap.dev/canary": "true"}},
		"spec": map[string]any{
			"machineConfigSelector": map[string]any{"matchExpressions": []any{map[string]any{
				"key": "machineconfiguration.openshift.io/role", "operator": "In", "values": []any{"worker", role}}}},
			"nodeSelector": map[string]any{"matchLabels": map[string]any{CanaryLabel: ""}},
		},
	}}
	cur, err := r.c.Get(ctx, poolRef(r.o.CanaryPool))
	switch {
	case err == nil && cur.GetLabels()["bootstrap.dev/canary"] == "true": // made by a killed run
	case err == nil || apierrors.IsNotFound(err):
		if _, err := r.c.Apply(ctx, []*unstructured.Unstructured{pool}, nil, nil); err != nil {
			return nil, fmt.Errorf("create the canary pool: %w", err)
		}
	default:
		return nil, fmt.Errorf("read the canary pool: %w", err)
	}
	var before string
	labelled := false
	for _, n := range v.Nodes {
		if n.Name == node {
			before = n.OSImage
			_, labelled = n.Labels[CanaryLabel]
		}
	}
	if !labelled {
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]any{CanaryLabel: ""}}})
		if _, err := r.c.Patch(ctx, cluster.Ref{APIVersion: "v1", Kind: "Node", Name: node}, patch); err != nil {
			return nil, fmt.Errorf("label the canary node %s: %w", node, err)
		}
	}
	return map[string]string{"pool": r.o.CanaryPool, "node": node, "osImage": before}, nil
}

func poolRef(name string) cluster.Ref {
	return cluster.Ref{APIVersion: "machineconfiguration.openshift.io/v1", Kind: "MachineConfigPool", Name: name}
}

// AnnPausedBy marks a pool the hop paused, written in the same patch as spec.paused (its value
// names the hop) and removed with the unpause: a run killed after the pause and before its
// record finds its pools by it, so preflight does not take them for someone else's and they are
// not paused twice.
const AnnPausedBy = "bootstrap.dev/paused-by"

// pause pauses every pool but master and the canary's.
func (r *runner) pause(ctx context.Context) (any, error) {
	v, err := ReadView(ctx, r.c, r.o.Now())
	if err != nil {
		return nil, err
	}
	var pools []string
	for _, p := range v.Pools {
		if p.Name == "master" || p.Name == r.o.CanaryPool {
			continue
		}
		if !p.Paused || p.PausedBy != r.pausedValue() { // else paused by a killed run of this hop
			if err := r.setPaused(ctx, p.Name, true); err != nil {
				return nil, err
			}
		}
		pools = append(pools, p.Name)
	}
	sort.Strings(pools)
	return map[string]any{"pools": pools}, nil
}

func (r *runner) setPaused(ctx context.Context, pool string, paused bool) error {
	spec := map[string]any{"paused": paused}
	if !paused && r.o.MaxUnavailable != nil {
		spec["maxUnavailable"] = r.o.MaxUnavailable
	}
	var by any // null removes the annotation in a merge patch
	if paused {
		by = r.pausedValue()
	}
	patch, _ := json.Marshal(map[string]any{"spec": spec, "metadata": map[string]any{"annotations": map[string]any{AnnPausedBy: by}}})
	_, err := r.c.Patch(ctx, poolRef(pool), patch)
	if err != nil {
		return fmt.Errorf("set MachineConfigPool/%s paused=%t: %w", pool, paused, err)
	}
	return nil
}

// desired sets spec.desiredUpdate to the hop's version and image by digest, never force. The
// intent is journaled first; the cluster is read first: a ClusterVersion already asking for
// this release (a run killed after the write, before its record) is not written again.
func (r *runner) desired(ctx context.Context) (any, error) {
	want := DesiredUpdate{Version: r.o.Hop.To, Image: r.o.Hop.Payload}
	v, err := ReadView(ctx, r.c, r.o.Now())
	if err != nil {
		return nil, err
	}
	if v.CV.Desired.Image == want.Image {
		return map[string]any{"desiredUpdate": want, "written": false, "found": "ClusterVersion spec.desiredUpdate already names the release: not set twice"}, nil
	}
	nodes := map[string]string{} // the configs before the hop: the first node transitions are judged against them
	for _, n := range v.Nodes {
		nodes[n.Name] = n.Current
	}
	if err := r.j.Record(r.key(StepIntent), map[string]any{"desiredUpdate": want, "was": v.CV.Desired, "nodes": nodes}); err != nil {
		return nil, err
	}
	patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"desiredUpdate": map[string]any{
		"version": want.Version, "image": want.Image, "force": false}}})
	if _, err := r.c.Patch(ctx, ClusterVersionRef, patch); err != nil {
		return nil, fmt.Errorf("set ClusterVersion spec.desiredUpdate: %w", err)
	}
	r.intentHere = true
	return map[string]any{"desiredUpdate": want, "written": true}, nil
}

func (r *runner) unpause(ctx context.Context) (any, error) {
	v, err := ReadView(ctx, r.c, r.o.Now())
	if err != nil {
		return nil, err
	}
	pools := r.pausedByUs()
	for _, p := range pools {
		if pv := v.Pool(p); pv == nil || (!pv.Paused && pv.PausedBy == "") {
			continue // gone, or unpaused by a killed run (the same patch set maxUnavailable)
		}
		if err := r.setPaused(ctx, p, false); err != nil {
			return nil, err
		}
	}
	rec := map[string]any{"pools": pools}
	if r.o.MaxUnavailable != nil {
		rec["maxUnavailable"] = r.o.MaxUnavailable.String()
	}
	return rec, nil
}

// close takes the canary node back into its pool, removes the canary pool, waits for history
// Completed and every pool updated, then resumes the MachineHealthChecks the hop paused.
func (r *runner) close(ctx context.Context) (any, error) {
	node := r.canaryNode()
	if node != "" {
		ref := cluster.Ref{APIVersion: "v1", Kind: "Node", Name: node}
		n, err := r.c.Get(ctx, ref)
		if err != nil {
			return nil, fmt.Errorf("read the canary node %s: %w", node, err)
		}
		if _, labelled := n.GetLabels()[CanaryLabel]; labelled { // else unlabelled by a killed run
			patch := []byte(`{"metadata":{"labels":{"` + CanaryLabel + `":null}}}`)
			if _, err := r.c.Patch(ctx, ref, patch); err != nil {
				return nil, fmt.Errorf("unlabel the canary node %s: %w", node, err)
			}
		}
		if err := r.c.Delete(ctx, poolRef(r.o.CanaryPool)); err != nil { // one already gone is not an error
			return nil, fmt.Errorf("remove the canary pool: %w", err)
		}
	}
	v, err := r.w.until(ctx, "the hop closed", func(v *View) (bool, string) {
		if h := v.CV.History; len(h) == 0 || h[0].State != "Completed" || h[0].Version != r.o.Hop.To {
			return false, "history not Completed"
		}
		if msg := r.backInPool(v, node); msg != "" {
			return false, msg
		}
		for _, p := range v.Pools {
			if !p.Done() {
				return false, "MachineConfigPool/" + p.Name + " not updated"
			}
		}
		return true, ""
	})
	if err != nil {
		return nil, err
	}
	// every node runs its new config: the health checks may judge nodes again
	resumed, err := r.resumeHealthChecks(ctx)
	if err != nil {
		return nil, err
	}
	return map[string]any{"history": v.CV.History[0], "canaryRemoved": node != "", "nodes": r.w.moved, "healthChecks": resumed}, nil
}

// backInPool says what is left before the canary node runs the worker pool's config again
// (empty when it does): leaving the canary pool is a config change of its own (the rendered
// name differs), and the next hop's preflight must not find the worker pool mid-update.
func (r *runner) backInPool(v *View, node string) string {
	if node == "" {
		return ""
	}
	w := v.Pool("worker")
	if w == nil {
		return ""
	}
	for _, n := range v.Nodes {
		if n.Name == node && (n.Current != w.RenderedSpec || n.Desired != n.Current || n.State != "Done") {
			return fmt.Sprintf("node %s back in pool worker: current %q desired %q state %q", node, n.Current, n.Desired, n.State)
		}
	}
	return ""
}
