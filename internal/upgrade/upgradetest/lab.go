package upgradetest

import (
	"context"
	"encoding/json"
	"sort"
	"sync"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/bootstrap-dev/bootstrap/internal/cluster/clustertest"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade"
)

// LabOptions shape the simulated cluster.
type LabOptions struct {
	Version string   // the Completed version (4.17.10)
	Workers []string // worker node names (w0, w1, w2 when nil)
	// Operators are the ClusterOperators (kube-apiserver, etcd, ingress, machine-config when nil).
	Operators []string
	// NotUpgradeable sets ClusterVersion Upgradeable=False with this reason.
	NotUpgradeable string
	// GPU names the workers labelled nvidia.com/gpu.present=true (their driver pods follow the
	// OS build); NoBlacklist leaves the day-1 irdma blacklist MachineConfig out.
	GPU         []string
	NoBlacklist bool
}

// PDBs and pods live here.
const WorkloadNamespace = "workload"

var (
	PDBs = clustertest.GVR("policy", "v1", "poddisruptionbudgets")
	Pods = clustertest.GVR("", "v1", "pods")
	MHCs = clustertest.GVR("machine.openshift.io", "v1beta1", "machinehealthchecks")
)

// Lab writes a healthy cluster at o.Version on the API server: ClusterVersion, ClusterOperators,
// the master and worker pools, one master and the workers, each node at its pool's rendered
// config. It removes what it made when the test ends (and what an earlier test left).
func Lab(t testing.TB, d dynamic.Interface, o LabOptions, clock *Clock) {
	t.Helper()
	if o.Workers == nil {
		o.Workers = []string{"w0", "w1", "w2"}
	}
	if o.Operators == nil {
		o.Operators = []string{"etcd", "ingress", "kube-apiserver", "machine-config"}
	}
	clean(t, d)
	t.Cleanup(func() { clean(t, d) })
	for _, ns := range []string{"openshift-config", "openshift-config-managed", WorkloadNamespace, GPUNamespace, "openshift-machine-api"} {
		_, err := d.Resource(clustertest.Namespaces).Create(context.Background(), obj("v1", "Namespace", "", ns), metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	now := clock.Now().UTC().Format(time.RFC3339)
	cv := obj("config.openshift.io/v1", "ClusterVersion", "", "version")
	cv.Object["spec"] = map[string]any{"clusterID": "5b1c9c8e-3f0a-4a0e-9d52-8d1e6f1b0a11", "channel": "stable-" + minor(o.Version)}
	clustertest.Create(t, d, clustertest.ClusterVersions, cv.Object)
	conds := []any{condition("Available", "True", "", "Done applying "+o.Version, now), condition("Failing", "False", "", "", now),
		condition("Progressing", "False", "", "Cluster version is "+o.Version, now), condition("ReleaseAccepted", "True", "PayloadLoaded", "", now)}
	if o.NotUpgradeable != "" {
		conds = append(conds, condition("Upgradeable", "False", o.NotUpgradeable, "Cluster operator operator-lifecycle-manager should not be upgraded between minor versions: ClusterServiceVersions blocking minor version upgrades", now))
	}
	clustertest.MustSetStatus(t, d, clustertest.ClusterVersions, "", "version", map[string]any{
		"desired":            map[string]any{"version": o.Version, "image": Payload(o.Version)},
		"history":            []any{map[string]any{"state": "Completed", "version": o.Version, "image": Payload(o.Version), "startedTime": now, "completionTime": now, "verified": true}},
		"observedGeneration": int64(1), "versionHash": "abc", "availableUpdates": nil, "conditions": conds,
	}, true)
	for _, name := range o.Operators {
		co := obj("config.openshift.io/v1", "ClusterOperator", "", name)
		co.Object["spec"] = map[string]any{}
		clustertest.Create(t, d, clustertest.ClusterOperators, co.Object)
		clustertest.MustSetStatus(t, d, clustertest.ClusterOperators, "", name, map[string]any{
			"versions":   []any{map[string]any{"name": "operator", "version": o.Version}},
			"conditions": []any{condition("Available", "True", "", "", now), condition("Degraded", "False", "", "", now), condition("Progressing", "False", "", "", now)},
		}, true)
	}
	for _, pool := range []string{"master", "worker"} {
		p := obj("machineconfiguration.openshift.io/v1", "MachineConfigPool", "", pool)
		p.Object["spec"] = map[string]any{
			"configuration":         map[string]any{"name": Rendered(pool, o.Version)},
			"nodeSelector":          map[string]any{"matchLabels": map[string]any{"node-role.kubernetes.io/" + pool: ""}},
			"machineConfigSelector": map[string]any{"matchLabels": map[string]any{"machineconfiguration.openshift.io/role": pool}},
		}
		clustertest.Create(t, d, clustertest.MachineConfigPools, p.Object)
	}
	node := func(name, pool string) {
		n := obj("v1", "Node", "", name)
		l := map[string]string{"node-role.kubernetes.io/" + pool: "", "kubernetes.io/arch": "amd64", upgrade.LabelOSBuild: OSBuild(o.Version)}
		for _, g := range o.GPU {
			if g == name {
				l[upgrade.LabelGPUPresent] = "true"
			}
		}
		n.SetLabels(l)
		n.SetAnnotations(map[string]string{upgrade.AnnCurrentConfig: Rendered(pool, o.Version), upgrade.AnnDesiredConfig: Rendered(pool, o.Version), upgrade.AnnState: "Done"})
		clustertest.Create(t, d, clustertest.Nodes, n.Object)
		clustertest.MustSetStatus(t, d, clustertest.Nodes, "", name, map[string]any{
			"conditions": []any{map[string]any{"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "kubelet is posting ready status", "lastTransitionTime": now, "lastHeartbeatTime": now}},
			"nodeInfo":   map[string]any{"architecture": "amd64", "osImage": osImage(o.Version)},
		}, true)
	}
	if !o.NoBlacklist {
		clustertest.Create(t, d, clustertest.MachineConfigs, blacklistMC())
	}
	node("m0", "master")
	for _, w := range o.Workers {
		node(w, "worker")
	}
}

// BlockingPDB puts a pod on node guarded by a PodDisruptionBudget that allows no disruption
// (status as the disruption controller writes it for one healthy pod and minAvailable 1).
func BlockingPDB(t testing.TB, d dynamic.Interface, name, node string) {
	t.Helper()
	pod := obj("v1", "Pod", WorkloadNamespace, name+"-0")
	pod.SetLabels(map[string]string{"app": name})
	pod.Object["spec"] = map[string]any{"nodeName": node, "containers": []any{map[string]any{"name": "db", "image": "registry.site.example:8443/db:1"}}}
	clustertest.Create(t, d, Pods, pod.Object)
	pdb := obj("policy/v1", "PodDisruptionBudget", WorkloadNamespace, name)
	pdb.Object["spec"] = map[string]any{"minAvailable": int64(1), "selector": map[string]any{"matchLabels": map[string]any{"app": name}}}
	clustertest.Create(t, d, PDBs, pdb.Object)
	clustertest.MustSetStatus(t, d, PDBs, WorkloadNamespace, name, map[string]any{"disruptionsAllowed": int64(0), "currentHealthy": int64(1),
		"desiredHealthy": int64(1), "expectedPods": int64(1), "observedGeneration": int64(1)}, true)
}

// MachineHealthCheckCRD is a minimal stand-in for machine-api's MachineHealthCheck CRD (same
// group, version, kind and scope; spec and status preserved as they are): testbin does not
// fetch the machine API's CRDs, and preflight only lists the objects.
func MachineHealthCheckCRD() *apiextensionsv1.CustomResourceDefinition {
	preserve := true
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "machinehealthchecks.machine.openshift.io"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "machine.openshift.io",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: "MachineHealthCheck", ListKind: "MachineHealthCheckList", Plural: "machinehealthchecks", Singular: "machinehealthcheck"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1beta1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: &preserve}}}},
		},
	}
}

func clean(t testing.TB, d dynamic.Interface) {
	ctx := context.Background()
	for _, r := range []struct {
		gvr schema.GroupVersionResource
		ns  string
	}{{clustertest.ClusterVersions, ""}, {clustertest.ClusterOperators, ""}, {clustertest.MachineConfigPools, ""},
		{clustertest.Nodes, ""}, {PDBs, WorkloadNamespace}, {Pods, WorkloadNamespace}, {Pods, GPUNamespace}, {clustertest.MachineConfigs, ""},
		{clustertest.GVR("", "v1", "configmaps"), "openshift-config-managed"}, {clustertest.GVR("", "v1", "configmaps"), "openshift-config"},
		// operators another test subscribed (capture's GPU Operator): one package, one Subscription
		{clustertest.Subscriptions, GPUNamespace}, {clustertest.ClusterServiceVersions, GPUNamespace}, {clustertest.InstallPlans, GPUNamespace}} {
		l, err := d.Resource(r.gvr).Namespace(r.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			continue
		}
		for _, it := range l.Items {
			zero := int64(0)
			if err := d.Resource(r.gvr).Namespace(r.ns).Delete(ctx, it.GetName(), metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("clean %s %s: %v", r.gvr.Resource, it.GetName(), err)
			}
		}
	}
}

// Journal is an in-memory upgrade.Journal that keeps every record in order.
type Journal struct {
	mu   sync.Mutex
	data map[string]json.RawMessage
	Keys []string
}

// Done implements upgrade.Journal.
func (j *Journal) Done(key string, out any) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	b, ok := j.data[key]
	if ok && out != nil && len(b) > 0 {
		_ = json.Unmarshal(b, out)
	}
	return ok
}

// Record implements upgrade.Journal.
func (j *Journal) Record(key string, data any) error {
	b, err := json.Marshal(data)
	if err != nil {
		return err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.data == nil {
		j.data = map[string]json.RawMessage{}
	}
	j.data[key] = b
	j.Keys = append(j.Keys, key)
	return nil
}

// Sorted returns the recorded keys sorted (for comparisons that ignore order).
func (j *Journal) Sorted() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	k := append([]string(nil), j.Keys...)
	sort.Strings(k)
	return k
}

func obj(apiVersion, kind, ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind}}
	u.SetName(name)
	if ns != "" {
		u.SetNamespace(ns)
	}
	return u
}
