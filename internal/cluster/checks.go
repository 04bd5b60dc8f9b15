package cluster

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// API versions of the objects the checks read.
const (
	ConfigV1        = "config.openshift.io/v1"
	MachineConfigV1 = "machineconfiguration.openshift.io/v1"
	OperatorsV1     = "operators.coreos.com/v1"
	OperatorsV1a1   = "operators.coreos.com/v1alpha1"
)

func str(u *unstructured.Unstructured, path ...string) string {
	if u == nil {
		return ""
	}
	s, _, _ := unstructured.NestedString(u.Object, path...)
	return s
}

func num(u *unstructured.Unstructured, path ...string) int64 {
	if u == nil {
		return 0
	}
	n, _, _ := unstructured.NestedInt64(u.Object, path...)
	return n
}

// CatalogSourceReady is done when OLM reports the catalog's gRPC connection READY.
func CatalogSourceReady(u *unstructured.Unstructured) (State, string) {
	if u == nil {
		return Pending, ""
	}
	s := str(u, "status", "connectionState", "lastObservedState")
	if s == "READY" {
		return Done, "READY"
	}
	if s == "" {
		return Pending, "no connection state yet"
	}
	return Pending, "connection " + s
}

// PoolStatus is a MachineConfigPool's machine counts and rendered config.
type PoolStatus struct {
	Name           string `json:"name"`
	Machines       int64  `json:"machines"`
	Updated        int64  `json:"updated"`
	Ready          int64  `json:"ready"`
	Degraded       int64  `json:"degraded"`
	RenderedConfig string `json:"renderedConfig,omitempty"`
}

// readPool reads the counts of a pool object.
func readPool(u *unstructured.Unstructured) PoolStatus {
	return PoolStatus{
		Name:           u.GetName(),
		Machines:       num(u, "status", "machineCount"),
		Updated:        num(u, "status", "updatedMachineCount"),
		Ready:          num(u, "status", "readyMachineCount"),
		Degraded:       num(u, "status", "degradedMachineCount"),
		RenderedConfig: str(u, "status", "configuration", "name"),
	}
}

// PoolUpdated returns a Check that is done when the pool is Updated, not Degraded, every machine
// updated and ready, and (when mustInclude names MachineConfigs) the pool's rendered configuration
// is built from each of them — so a wait right after applying a MachineConfig does not end on the
// pool's previous Updated state.
func PoolUpdated(mustInclude ...string) Check {
	return func(u *unstructured.Unstructured) (State, string) {
		if u == nil {
			return Pending, ""
		}
		p := readPool(u)
		counts := fmt.Sprintf("%d/%d machines updated, %d ready, %d degraded", p.Updated, p.Machines, p.Ready, p.Degraded)
		for _, typ := range []string{"Degraded", "NodeDegraded", "RenderDegraded"} {
			if s, reason, msg, _ := Condition(u, typ); s == "True" {
				return Failed, fmt.Sprintf("%s (%s): %s; %s", typ, reason, msg, counts)
			}
		}
		if g, og := u.GetGeneration(), num(u, "status", "observedGeneration"); og < g {
			return Pending, fmt.Sprintf("controller has not seen generation %d yet; %s", g, counts)
		}
		if missing := missingSources(u, mustInclude); len(missing) > 0 {
			return Pending, fmt.Sprintf("rendered config does not include %s yet; %s", strings.Join(missing, ", "), counts)
		}
		if s, _, _, _ := Condition(u, "Updated"); s != "True" {
			return Pending, "updating: " + counts
		}
		if p.Updated != p.Machines || p.Ready != p.Machines {
			return Pending, "updating: " + counts
		}
		return Done, "Updated: " + counts
	}
}

func missingSources(u *unstructured.Unstructured, names []string) []string {
	src, _, _ := unstructured.NestedSlice(u.Object, "status", "configuration", "source")
	have := map[string]bool{}
	for _, s := range src {
		if m, ok := s.(map[string]any); ok {
			if n, ok := m["name"].(string); ok {
				have[n] = true
			}
		}
	}
	var missing []string
	for _, n := range names {
		if !have[n] {
			missing = append(missing, n)
		}
	}
	return missing
}

// conditionTrue returns a Check done when the condition typ is True; failIf names conditions
// whose True status is a failure (Degraded).
func conditionTrue(typ string, failIf ...string) Check {
	return func(u *unstructured.Unstructured) (State, string) {
		if u == nil {
			return Pending, ""
		}
		for _, f := range failIf {
			if s, reason, msg, _ := Condition(u, f); s == "True" {
				return Failed, fmt.Sprintf("%s (%s): %s", f, reason, msg)
			}
		}
		s, reason, msg, ok := Condition(u, typ)
		switch {
		case !ok:
			return Pending, "no " + typ + " condition yet"
		case s == "True":
			return Done, typ
		default:
			return Pending, fmt.Sprintf("%s=%s (%s): %s", typ, s, reason, msg)
		}
	}
}

// NodeReady is done when a Node's Ready condition is True.
var NodeReady = conditionTrue("Ready")

// ClusterVersionAvailable is done when the ClusterVersion is Available and fails when it reports
// Failing.
var ClusterVersionAvailable = conditionTrue("Available", "Failing")

// DeploymentAvailable is done when a Deployment is Available with every replica updated.
func DeploymentAvailable(u *unstructured.Unstructured) (State, string) {
	if u == nil {
		return Pending, ""
	}
	if s, _, msg, _ := Condition(u, "Progressing"); s == "False" {
		return Failed, "not progressing: " + msg
	}
	want := num(u, "spec", "replicas")
	avail := num(u, "status", "availableReplicas")
	if s, _, _, _ := Condition(u, "Available"); s == "True" && avail >= want {
		return Done, fmt.Sprintf("Available (%d/%d replicas)", avail, want)
	}
	return Pending, fmt.Sprintf("%d/%d replicas available", avail, want)
}
