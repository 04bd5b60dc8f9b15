package cluster_test

import (
	"context"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/bootstrap-dev/bootstrap/internal/cluster"
	"github.com/bootstrap-dev/bootstrap/internal/cluster/clustertest"
)

const testCA = `-----BEGIN CERTIFICATE-----
MIIBszCCAVmgAwIBAgIUQ2VydGlmaWNhdGUgZm9yIHRlc3RzMAoGCCqGSM49BAMC
-----END CERTIFICATE-----
`

// workDir lays out what the mirror and iso stages write.
func workDir(t *testing.T) string {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "idms-oc-mirror.yaml"), `apiVersion: config.openshift.io/v1
kind: ImageDigestMirrorSet
metadata:
  name: bootstrap-release
spec:
  imageDigestMirrors:
  - source: quay.io/openshift-release-dev/ocp-release
    mirrors: [registry.site.example:8443/ocp/release]
`)
	write(t, filepath.Join(dir, "itms-oc-mirror.yaml"), `apiVersion: config.openshift.io/v1
kind: ImageTagMirrorSet
metadata:
  name: bootstrap-tags
spec:
  imageTagMirrors:
  - source: registry.redhat.io/rhel9
    mirrors: [registry.site.example:8443/rhel9]
`)
	write(t, filepath.Join(dir, "cs-redhat-operators.yaml"), `apiVersion: operators.coreos.com/v1alpha1
kind: CatalogSource
metadata:
  name: cs-redhat-operators
  namespace: openshift-marketplace
spec:
  sourceType: grpc
  image: registry.site.example:8443/redhat/redhat-operator-index:v4.20
  displayName: Red Hat Operators (mirror)
`)
	write(t, filepath.Join(dir, "openshift", "99-worker-irdma-blacklist.yaml"), irdmaMC("99-worker-irdma-blacklist", map[string]string{"machineconfiguration.openshift.io/role": "worker"}))
	write(t, filepath.Join(dir, "ca.pem"), testCA)
	return dir
}

func irdmaMC(name string, labels map[string]string) string {
	l := ""
	for k, v := range labels {
		l += "    " + k + ": " + v + "\n"
	}
	content := "data:text/plain;charset=utf-8;base64," + base64.StdEncoding.EncodeToString([]byte("blacklist irdma\n"))
	return `apiVersion: machineconfiguration.openshift.io/v1
kind: MachineConfig
metadata:
  name: ` + name + `
  labels:
` + l + `spec:
  config:
    ignition: {version: 3.4.0}
    storage:
      files:
      - path: /etc/modprobe.d/irdma-blacklist.conf
        mode: 420
        overwrite: true
        contents: {source: "` + content + `"}
`
}

type prober struct {
	mu     sync.Mutex
	calls  []string
	loaded bool
}

func (p *prober) ModuleLoaded(_ context.Context, node, addr, module string) (bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, node+"@"+addr+":"+module)
	return p.loaded, nil
}

// playMCO acts as the machine-config operator and OLM: it marks the catalog READY once it exists,
// renders the worker pool from the blacklist MachineConfig and reports every machine updated.
func playMCO(t *testing.T, d dynamic.Interface) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		catalogDone, poolDone := false, false
		for ctx.Err() == nil && !(catalogDone && poolDone) {
			time.Sleep(100 * time.Millisecond)
			if !catalogDone {
				if _, err := d.Resource(clustertest.CatalogSources).Namespace("openshift-marketplace").Get(ctx, "cs-redhat-operators", metav1.GetOptions{}); err == nil {
					err := clustertest.SetStatus(d, clustertest.CatalogSources, "openshift-marketplace", "cs-redhat-operators", map[string]any{
						"connectionState": map[string]any{"lastObservedState": "READY", "address": "cs.openshift-marketplace.svc:50051", "lastConnect": "2026-01-01T00:00:00Z"},
					}, true)
					catalogDone = err == nil
				}
			}
			if !poolDone {
				mc, err := d.Resource(clustertest.MachineConfigs).Get(ctx, "99-worker-irdma-blacklist", metav1.GetOptions{})
				if err != nil {
					continue
				}
				rendered := mc.DeepCopy()
				rendered.SetName("rendered-worker-1")
				rendered.SetResourceVersion("")
				rendered.SetUID("")
				rendered.SetManagedFields(nil)
				rendered.SetLabels(nil)
				if _, err := d.Resource(clustertest.MachineConfigs).Create(ctx, rendered, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
					t.Errorf("render: %v", err)
					return
				}
				poolDone = clustertest.SetStatus(d, clustertest.MachineConfigPools, "", "worker", poolStatus("rendered-worker-1", 1, "False"), true) == nil
			}
		}
	}()
	return func() { cancel(); <-done }
}

func poolStatus(rendered string, gen int64, degraded string) map[string]any {
	return map[string]any{
		"observedGeneration": gen,
		"machineCount":       int64(1), "updatedMachineCount": int64(1), "readyMachineCount": int64(1),
		"unavailableMachineCount": int64(0), "degradedMachineCount": int64(0),
		"configuration": map[string]any{"name": rendered, "source": []any{
			map[string]any{"apiVersion": "machineconfiguration.openshift.io/v1", "kind": "MachineConfig", "name": "99-worker-irdma-blacklist"},
		}},
		"conditions": []any{
			map[string]any{"type": "Updated", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z", "reason": "", "message": "All nodes are updated"},
			map[string]any{"type": "Degraded", "status": degraded, "lastTransitionTime": "2026-01-01T00:00:00Z", "reason": "NodeDegraded", "message": "Node worker-0 is reporting: \"unexpected on-disk state\""},
		},
	}
}

func seedPoolAndNode(t *testing.T, d dynamic.Interface) {
	for _, ns := range []string{"openshift-marketplace", "openshift-config"} {
		clustertest.Create(t, d, clustertest.GVR("", "v1", "namespaces"), map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}})
	}
	clustertest.Create(t, d, clustertest.MachineConfigPools, map[string]any{
		"apiVersion": "machineconfiguration.openshift.io/v1", "kind": "MachineConfigPool",
		"metadata": map[string]any{"name": "worker"},
		"spec": map[string]any{
			"machineConfigSelector": map[string]any{"matchLabels": map[string]any{"machineconfiguration.openshift.io/role": "worker"}},
			"nodeSelector":          map[string]any{"matchLabels": map[string]any{"node-role.kubernetes.io/worker": ""}},
		},
	})
	clustertest.Create(t, d, clustertest.Nodes, map[string]any{
		"apiVersion": "v1", "kind": "Node",
		"metadata": map[string]any{"name": "worker-0", "labels": map[string]any{"node-role.kubernetes.io/worker": ""},
			"annotations": map[string]any{"machineconfiguration.openshift.io/currentConfig": "rendered-worker-1"}},
	})
	clustertest.MustSetStatus(t, d, clustertest.Nodes, "", "worker-0", map[string]any{
		"addresses": []any{map[string]any{"type": "InternalIP", "address": "127.0.0.1"}},
	}, true)
}

func TestConfigure(t *testing.T) {
	c, d := newClient(t)
	seedPoolAndNode(t, d)
	dir := workDir(t)
	p := &prober{}
	opts := cluster.ConfigureOptions{
		WorkDir: dir, RegistryHost: "registry.site.example:8443", CAFiles: []string{filepath.Join(dir, "ca.pem")},
		DisableDefaultSources: true, Prober: p, Timeout: 20 * time.Second,
		Blacklists: []cluster.Blacklist{{Modules: []string{"irdma"}, Pools: []string{"worker"}}},
	}
	stop := playMCO(t, d)
	var mu sync.Mutex
	var lines []string
	progress := func(s string) { mu.Lock(); lines = append(lines, s); mu.Unlock() }
	res, err := c.Configure(context.Background(), opts, progress)
	stop()
	if err != nil {
		t.Fatalf("configure: %v\nprogress:\n%s", err, strings.Join(lines, "\n"))
	}
	kinds := map[string]cluster.Action{}
	for _, a := range res.Applied {
		kinds[a.Kind] = a.Action
	}
	for _, k := range []string{"ImageDigestMirrorSet", "ImageTagMirrorSet", "CatalogSource", "MachineConfig", "OperatorHub", "ConfigMap", "Image"} {
		if kinds[k] != cluster.Created {
			t.Errorf("%s: %q, want created", k, kinds[k])
		}
	}
	if len(res.CatalogSources) != 1 || len(res.Pools) != 1 || res.Pools[0].Machines != 1 || res.Pools[0].RenderedConfig != "rendered-worker-1" {
		t.Fatalf("result: %+v", res)
	}
	if len(res.Blacklist) != 1 || !res.Blacklist[0].InConfig || res.Blacklist[0].Loaded == nil || *res.Blacklist[0].Loaded {
		t.Fatalf("blacklist: %+v", res.Blacklist)
	}
	if len(p.calls) != 1 || p.calls[0] != "worker-0@127.0.0.1:irdma" {
		t.Fatalf("prober calls: %q", p.calls)
	}
	img, err := c.Get(context.Background(), cluster.Ref{APIVersion: cluster.ConfigV1, Kind: "Image", Name: "cluster"})
	if err != nil || img.Object["spec"].(map[string]any)["additionalTrustedCA"].(map[string]any)["name"] != cluster.TrustedCAConfigMap {
		t.Fatalf("image config: %v %v", img, err)
	}
	cm, err := c.Get(context.Background(), cluster.Ref{APIVersion: "v1", Kind: "ConfigMap", Namespace: "openshift-config", Name: cluster.TrustedCAConfigMap})
	if err != nil || !strings.Contains(cm.Object["data"].(map[string]any)["registry.site.example..8443"].(string), "BEGIN CERTIFICATE") {
		t.Fatalf("CA configmap keyed by host..port: %v %v", cm, err)
	}

	t.Run("second run changes nothing", func(t *testing.T) {
		res, err := c.Configure(context.Background(), opts, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Changed != 0 {
			t.Fatalf("second run changed %d objects: %+v", res.Changed, res.Applied)
		}
	})

	t.Run("module loaded on the node fails", func(t *testing.T) {
		_, err := c.VerifyBlacklists(context.Background(), opts.Blacklists, &prober{loaded: true}, nil)
		var be *cluster.BlacklistError
		if !errors.As(err, &be) || !strings.Contains(be.Error(), "node worker-0: irdma is loaded") {
			t.Fatalf("want BlacklistError, got %v", err)
		}
	})

	t.Run("rendered config without the blacklist fails", func(t *testing.T) {
		clustertest.Create(t, d, clustertest.MachineConfigs, map[string]any{
			"apiVersion": "machineconfiguration.openshift.io/v1", "kind": "MachineConfig",
			"metadata": map[string]any{"name": "rendered-worker-0"},
			"spec":     map[string]any{"kernelArguments": []any{"module_blacklist=nouveau"}},
		})
		n, err := d.Resource(clustertest.Nodes).Get(context.Background(), "worker-0", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		n.SetAnnotations(map[string]string{"machineconfiguration.openshift.io/currentConfig": "rendered-worker-0"})
		if _, err := d.Resource(clustertest.Nodes).Update(context.Background(), n, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		_, err = c.VerifyBlacklists(context.Background(), opts.Blacklists, nil, nil)
		var be *cluster.BlacklistError
		if !errors.As(err, &be) || !strings.Contains(be.Error(), "rendered-worker-0 does not blacklist irdma") {
			t.Fatalf("want BlacklistError, got %v", err)
		}
	})

	t.Run("degraded pool fails with its message", func(t *testing.T) {
		clustertest.MustSetStatus(t, d, clustertest.MachineConfigPools, "", "worker", poolStatus("rendered-worker-1", 1, "True"), true)
		_, err := c.Configure(context.Background(), opts, nil)
		var fe *cluster.FailedError
		if !errors.As(err, &fe) || fe.Ref.Name != "worker" || !strings.Contains(fe.Message, "unexpected on-disk state") {
			t.Fatalf("want FailedError from the pool, got %v", err)
		}
	})
}

func TestBlacklistsReadsKernelArgsAndFiles(t *testing.T) {
	objs, err := cluster.Decode("mc.yaml", []byte(irdmaMC("x", map[string]string{"a": "b"})))
	if err != nil {
		t.Fatal(err)
	}
	if !cluster.Blacklists(objs[0], "irdma") || cluster.Blacklists(objs[0], "ice") {
		t.Fatal("file-based blacklist misread")
	}
	ka, _ := cluster.Decode("ka.yaml", []byte("apiVersion: machineconfiguration.openshift.io/v1\nkind: MachineConfig\nmetadata: {name: k}\nspec:\n  kernelArguments: [\"module_blacklist=nouveau,irdma\"]\n"))
	if !cluster.Blacklists(ka[0], "irdma") || cluster.Blacklists(ka[0], "irdm") {
		t.Fatal("kernel-argument blacklist misread")
	}
}

func TestObjectsDeduplicatesInstallTimeCopies(t *testing.T) {
	dir := workDir(t)
	cs, err := os.ReadFile(filepath.Join(dir, "cs-redhat-operators.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// The iso stage's copy, with its comment header: same object.
	write(t, filepath.Join(dir, "openshift", "cs-redhat-operators.yaml"), "# applied at install time\n"+string(cs))
	objs, srcs, err := cluster.Objects(cluster.ConfigureOptions{WorkDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for i, u := range objs {
		if u.GetKind() == "CatalogSource" {
			n++
			if srcs[i] != "cs-redhat-operators.yaml" {
				t.Errorf("kept the copy from %s", srcs[i])
			}
		}
	}
	if n != 1 {
		t.Fatalf("%d CatalogSources, want 1", n)
	}
	write(t, filepath.Join(dir, "openshift", "cs-redhat-operators.yaml"), strings.Replace(string(cs), "v4.20", "v4.21", 1))
	if _, _, err := cluster.Objects(cluster.ConfigureOptions{WorkDir: dir}); err == nil || !strings.Contains(err.Error(), "different content") {
		t.Fatalf("differing copies: %v", err)
	}
}
