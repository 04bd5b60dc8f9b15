package upgrade

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/bootstrap-dev/bootstrap/internal/cluster"
)

// MachineHealthChecks as the machine API serves them; the machine-api operator's MHC controller
// watches those in MachineAPINamespace and skips one carrying MHCPausedAnnotation (the
// annotation its annotations package names, shared with Cluster API), so a node rebooting into
// its new config is not taken for unhealthy and remediated mid-hop.
const (
	mhcAPIVersion       = "machine.openshift.io/v1beta1"
	mhcKind             = "MachineHealthCheck"
	MachineAPINamespace = "openshift-machine-api"
	MHCPausedAnnotation = "cluster.x-k8s.io/paused"
)

// pauseHealthChecks annotates every MachineHealthCheck of the machine API that is not paused
// already; the journal keeps the names, so close resumes those and only those (one paused by
// someone else before the hop stays paused).
func (r *runner) pauseHealthChecks(ctx context.Context) (any, error) {
	served, err := r.c.Served(mhcAPIVersion, mhcKind)
	if err != nil {
		return nil, err
	}
	if !served {
		return map[string]string{"skipped": "the cluster serves no MachineHealthCheck (" + mhcAPIVersion + ")"}, nil
	}
	mhcs, err := r.c.List(ctx, mhcAPIVersion, mhcKind, MachineAPINamespace, "")
	if err != nil {
		return nil, fmt.Errorf("list the MachineHealthChecks in %s: %w", MachineAPINamespace, err)
	}
	paused, already := []string{}, []string{}
	for i := range mhcs {
		name := mhcs[i].GetName()
		// ours when it carries our value: a run killed after the patch, before its record
		v, ok := mhcs[i].GetAnnotations()[MHCPausedAnnotation]
		if ok && v != r.pausedValue() {
			already = append(already, name)
			continue
		}
		if !ok { // else ours already: paused by a killed run of this hop
			if err := r.annotateHealthCheck(ctx, name, true); err != nil {
				return nil, err
			}
		}
		paused = append(paused, name)
	}
	sort.Strings(paused)
	sort.Strings(already)
	return map[string]any{"healthChecks": paused, "alreadyPaused": already}, nil
}

// healthChecksPausedByUs are the MachineHealthChecks the journal says this hop paused.
func (r *runner) healthChecksPausedByUs() []string {
	var p struct{ HealthChecks []string }
	r.j.Done(r.key(StepHealthPause), &p)
	return p.HealthChecks
}

// resumeHealthChecks removes the pause annotation from those this hop paused and that still
// carry its value; one deleted since is not an error, one already resumed (by a run killed
// before its record) is not written again, one someone else paused since is left paused.
func (r *runner) resumeHealthChecks(ctx context.Context) ([]string, error) {
	var resumed []string
	for _, name := range r.healthChecksPausedByUs() {
		u, err := r.c.Get(ctx, cluster.Ref{APIVersion: mhcAPIVersion, Kind: mhcKind, Namespace: MachineAPINamespace, Name: name})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return resumed, fmt.Errorf("read MachineHealthCheck %s/%s: %w", MachineAPINamespace, name, err)
		}
		v, ok := u.GetAnnotations()[MHCPausedAnnotation]
		if ok && v != r.pausedValue() {
			continue
		}
		if ok {
			if err := r.annotateHealthCheck(ctx, name, false); err != nil {
				return resumed, err
			}
		}
		resumed = append(resumed, name)
	}
	return resumed, nil
}

// pausedValue is the annotation's value when this hop paused the check (the controller reads
// only the key).
func (r *runner) pausedValue() string { return "bootstrap upgrade " + r.o.Hop.To }

func (r *runner) annotateHealthCheck(ctx context.Context, name string, pause bool) error {
	var val any // null removes the annotation in a merge patch
	if pause {
		val = r.pausedValue()
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{MHCPausedAnnotation: val}}})
	ref := cluster.Ref{APIVersion: mhcAPIVersion, Kind: mhcKind, Namespace: MachineAPINamespace, Name: name}
	if _, err := r.c.Patch(ctx, ref, patch); err != nil {
		return fmt.Errorf("set %s on MachineHealthCheck %s/%s (paused=%t): %w", MHCPausedAnnotation, MachineAPINamespace, name, pause, err)
	}
	return nil
}
