package upgrade

import (
	"context"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/bootstrap-dev/bootstrap/internal/cluster"
)

// captured are the kinds a state holds, as `oc get` would list them.
var captured = []struct{ apiVersion, kind string }{
	{"config.openshift.io/v1", "ClusterVersion"},
	{"operators.coreos.com/v1alpha1", "ClusterServiceVersion"},
	{"operators.coreos.com/v1alpha1", "Subscription"},
	{"v1", "Node"},
	{"machineconfiguration.openshift.io/v1", "MachineConfigPool"},
	{"nvidia.com/v1", "ClusterPolicy"},
}

// configMaps are the admin-gates (delivered by the running release) and admin-acks.
var configMaps = []cluster.Ref{
	{APIVersion: "v1", Kind: "ConfigMap", Namespace: "openshift-config-managed", Name: "admin-gates"},
	{APIVersion: "v1", Kind: "ConfigMap", Namespace: "openshift-config", Name: "admin-acks"},
}

// Capture reads the cluster's state through its API, read-only: the same objects a captured
// state file holds. It returns the state and the List it was parsed from (JSON), which is what
// a state file holds, to keep as evidence or plan from again offline. A kind the cluster does
// not serve (no ClusterPolicy without the GPU Operator) is left out.
func Capture(ctx context.Context, c *cluster.Client) (*State, []byte, error) {
	var items []map[string]any
	for _, k := range captured {
		ok, err := c.Served(k.apiVersion, k.kind)
		if err != nil {
			return nil, nil, fmt.Errorf("capture: %s: %w", k.kind, err)
		}
		if !ok {
			if k.kind == "ClusterVersion" {
				return nil, nil, refuse(ReasonState, "cluster", "point --kubeconfig at an OpenShift cluster", "the API server does not serve ClusterVersion (config.openshift.io/v1)")
			}
			continue
		}
		objs, err := c.List(ctx, k.apiVersion, k.kind, "", "")
		if err != nil {
			return nil, nil, fmt.Errorf("capture: %w", err)
		}
		for _, o := range objs {
			items = append(items, trim(o))
		}
	}
	for _, r := range configMaps {
		o, err := c.Get(ctx, r)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("capture: %s: %w", r, err)
		}
		items = append(items, trim(*o))
	}
	b, err := json.MarshalIndent(map[string]any{"apiVersion": "v1", "kind": "List", "items": items}, "", "  ")
	if err != nil {
		return nil, nil, err
	}
	st, err := ParseState("", b)
	return st, b, err
}

// trim drops managedFields, the bulk of an object that says nothing to a plan.
func trim(o unstructured.Unstructured) map[string]any {
	unstructured.RemoveNestedField(o.Object, "metadata", "managedFields")
	return o.Object
}
