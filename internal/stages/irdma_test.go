package stages

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/bootstrap-dev/bootstrap/internal/cluster"
	"github.com/bootstrap-dev/bootstrap/internal/cluster/clustertest"
	"github.com/bootstrap-dev/bootstrap/internal/gather"
	"github.com/bootstrap-dev/bootstrap/internal/gather/sshtest"
	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// The configure stage checks the irdma blacklist on the node itself over SSH (real sshd, the
// profile's key, the host key recorded in the work dir on first contact): not loaded passes,
// loaded fails naming the node, and a changed host key is refused rather than trusted.
func TestConfigureStageChecksIrdmaOverSSHAndRefusesAChangedHostKey(t *testing.T) {
	sshd := sshtest.Start(t)
	// This sandbox has no /proc/modules: lsmod is a stand-in printing lsmod's format from a file.
	mods := filepath.Join(t.TempDir(), "modules")
	writeFile(t, filepath.Join(sshd.BinDir, "lsmod"), "#!/bin/sh\necho 'Module                  Size  Used by'\ncat "+mods+"\n", 0o755)
	writeFile(t, mods, "ice                  1056768  0\n", 0o644)
	writeFile(t, sshd.KeyFile+".pub", string(ssh.MarshalAuthorizedKey(sshd.Signer.PublicKey())), 0o644)

	cfg := apiServer.Config(t)
	d := clustertest.Dynamic(t, cfg)
	const pool, node, rendered = "irdma-gpu", "gpu-0", "rendered-irdma-gpu-1"
	for _, ns := range []string{"openshift-marketplace", "openshift-config"} {
		ensureNS(t, d, ns)
	}
	clustertest.Create(t, d, clustertest.MachineConfigs, map[string]any{
		"apiVersion": "machineconfiguration.openshift.io/v1", "kind": "MachineConfig",
		"metadata": map[string]any{"name": rendered},
		"spec":     map[string]any{"kernelArguments": []any{"module_blacklist=irdma"}},
	})
	clustertest.Create(t, d, clustertest.MachineConfigPools, map[string]any{
		"apiVersion": "machineconfiguration.openshift.io/v1", "kind": "MachineConfigPool",
		"metadata": map[string]any{"name": pool},
		"spec": map[string]any{
			"machineConfigSelector": map[string]any{"matchLabels": map[string]any{"machineconfiguration.openshift.io/role": pool}},
			"nodeSelector":          map[string]any{"matchLabels": map[string]any{"node-role.kubernetes.io/" + pool: ""}},
		},
	})
	clustertest.MustSetStatus(t, d, clustertest.MachineConfigPools, "", pool, map[string]any{
		"observedGeneration": int64(1), "machineCount": int64(1), "updatedMachineCount": int64(1), "readyMachineCount": int64(1),
		"unavailableMachineCount": int64(0), "degradedMachineCount": int64(0),
		"configuration": map[string]any{"name": rendered},
		"conditions": []any{
			map[string]any{"type": "Updated", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z", "reason": "", "message": "All nodes are updated"},
			map[string]any{"type": "Degraded", "status": "False", "lastTransitionTime": "2026-01-01T00:00:00Z", "reason": "", "message": ""},
		},
	}, true)
	clustertest.Create(t, d, clustertest.Nodes, map[string]any{
		"apiVersion": "v1", "kind": "Node",
		"metadata": map[string]any{"name": node, "labels": map[string]any{"node-role.kubernetes.io/" + pool: ""},
			"annotations": map[string]any{"machineconfiguration.openshift.io/currentConfig": rendered}},
	})
	clustertest.MustSetStatus(t, d, clustertest.Nodes, "", node, map[string]any{
		"addresses": []any{map[string]any{"type": "InternalIP", "address": "127.0.0.1"}},
	}, true)

	work := t.TempDir()
	writeFile(t, Kubeconfig(work), string(apiServer.Kubeconfig(t)), 0o600)
	s := &site.Site{
		Cluster:  site.Cluster{Name: "lab", BaseDomain: "example.com", SSHKeyFile: sshd.KeyFile + ".pub"},
		Registry: site.Registry{Host: "registry.site.example:8443"},
		Day1:     site.Day1{ModuleBlacklist: []site.ModuleBlacklist{{Modules: []string{"irdma"}, Pools: []string{pool}}}},
	}
	env := &pipeline.Env{Site: s, WorkDir: work}
	st := Configure{ClientOptions: []cluster.Option{cluster.WithPollInterval(100 * time.Millisecond)}, Timeout: 10 * time.Second,
		SSHUser: sshd.User, SSHPort: sshd.Port}
	ctx := context.Background()

	out, err := st.Run(ctx, env)
	if err != nil {
		t.Fatalf("configure: %v", err)
	}
	var checked bool
	for _, b := range out.(ConfigureOutput).Blacklist {
		if b.Node == node {
			checked = b.InConfig && b.Loaded != nil && !*b.Loaded
		}
	}
	if !checked {
		t.Fatalf("irdma on %s: %+v, want blacklisted in %s and checked not loaded on the node", node, out.(ConfigureOutput).Blacklist, rendered)
	}
	kh, err := os.ReadFile(KnownHosts(work))
	if err != nil || !strings.Contains(string(kh), "[127.0.0.1]:"+strconv.Itoa(sshd.Port)) {
		t.Fatalf("host key not recorded in the work dir: %v\n%s", err, kh)
	}

	writeFile(t, mods, "ice                  1056768  1 irdma\nirdma                 552960  0\n", 0o644)
	var be *cluster.BlacklistError
	if _, err := st.Run(ctx, env); !errors.As(err, &be) || !strings.Contains(err.Error(), "node gpu-0: irdma is loaded") {
		t.Fatalf("irdma loaded: %v, want a BlacklistError naming the node", err)
	}

	sshd.Restart(t) // the node answers with another host key
	_, err = st.Run(ctx, env)
	var hk *gather.HostKeyChangedError
	if !errors.As(err, &hk) {
		t.Fatalf("a changed host key must be refused: %v", err)
	}
	if after, _ := os.ReadFile(KnownHosts(work)); string(after) != string(kh) {
		t.Errorf("the refused key was recorded:\n%s", after)
	}
}

func writeFile(t *testing.T, path, data string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), mode); err != nil {
		t.Fatal(err)
	}
}

func ensureNS(t *testing.T, d dynamic.Interface, name string) {
	t.Helper()
	_, err := d.Resource(clustertest.Namespaces).Create(context.Background(), &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}
