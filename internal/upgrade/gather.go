package upgrade

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/bootstrap-dev/bootstrap/internal/cluster"
)

// Gathered is what a trip's gather wrote: the directory, its files, and what it could not read.
type Gathered struct {
	Dir     string   `json:"dir"`
	Files   []string `json:"files"`
	Missing []string `json:"missing,omitempty"` // what could not be read, with why
}

// The machine-config daemon, as the MCO runs it (its logs say why a node did not update).
const (
	mcoNamespace = "openshift-machine-config-operator"
	mcdSelector  = "k8s-app=machine-config-daemon"
	mcdContainer = "machine-config-daemon"
	mcdTail      = 2000
)

// GatherTrip writes what explains a trip into dir, read-only: the trip itself, ClusterVersion,
// ClusterOperators, MachineConfigPools, nodes, PodDisruptionBudgets and events (each a List in
// JSON, as `oc get -o json` prints it) and the last lines of every machine-config daemon's log.
// What cannot be read is named in Missing; the gather goes on.
func GatherTrip(ctx context.Context, c *cluster.Client, dir string, trip *Trip) (*Gathered, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	g := &Gathered{Dir: dir}
	write := func(name string, b []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			g.Missing = append(g.Missing, name+": "+err.Error())
			return
		}
		g.Files = append(g.Files, name)
	}
	if trip != nil {
		b, _ := json.MarshalIndent(map[string]any{"trip": trip, "sentence": trip.Sentence()}, "", "  ")
		write("trip.json", b)
	}
	for _, k := range []struct{ file, apiVersion, kind string }{
		{"clusterversion.json", "config.openshift.io/v1", "ClusterVersion"},
		{"clusteroperators.json", "config.openshift.io/v1", "ClusterOperator"},
		{"machineconfigpools.json", "machineconfiguration.openshift.io/v1", "MachineConfigPool"},
		{"nodes.json", "v1", "Node"},
		{"poddisruptionbudgets.json", "policy/v1", "PodDisruptionBudget"},
		{"events.json", "v1", "Event"},
	} {
		items, err := c.List(ctx, k.apiVersion, k.kind, "", "")
		if err != nil {
			g.Missing = append(g.Missing, k.file+": "+err.Error())
			continue
		}
		sort.Slice(items, func(i, j int) bool {
			return items[i].GetNamespace()+"/"+items[i].GetName() < items[j].GetNamespace()+"/"+items[j].GetName()
		})
		list := map[string]any{"apiVersion": "v1", "kind": "List", "items": objects(items)}
		b, err := json.MarshalIndent(list, "", "  ")
		if err != nil {
			g.Missing = append(g.Missing, k.file+": "+err.Error())
			continue
		}
		write(k.file, b)
	}
	pods, err := c.List(ctx, "v1", "Pod", mcoNamespace, mcdSelector)
	if err != nil {
		g.Missing = append(g.Missing, "machine-config daemon pods: "+err.Error())
	}
	if err == nil && len(pods) == 0 {
		g.Missing = append(g.Missing, "machine-config daemon logs: no pod "+mcdSelector+" in "+mcoNamespace)
	}
	for _, p := range pods {
		node, _, _ := unstructured.NestedString(p.Object, "spec", "nodeName")
		name := fmt.Sprintf("mcd-%s.log", node)
		b, err := c.PodLog(ctx, mcoNamespace, p.GetName(), mcdContainer, mcdTail)
		if err != nil {
			g.Missing = append(g.Missing, name+": "+err.Error())
			continue
		}
		write(name, b)
	}
	sort.Strings(g.Files)
	return g, nil
}

func objects(items []unstructured.Unstructured) []any {
	out := make([]any, len(items))
	for i := range items {
		out[i] = items[i].Object
	}
	return out
}
