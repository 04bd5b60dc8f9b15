//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/openpgp" //nolint:staticcheck // the CVO's signatures are OpenPGP; the lab's throwaway key
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/bootstrap-dev/bootstrap/e2e/lab/harness"
	"github.com/bootstrap-dev/bootstrap/internal/cluster/clustertest"
	"github.com/bootstrap-dev/bootstrap/internal/gather/sshtest"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade/upgradetest"
)

// upgradeDemo is the demo's world: the lab's source registry (its releases 4.18.0 .. 4.21.1),
// update service (graph, graph-data, signature store) and mirror registry; a simulated cluster
// at the lab's 4.18.0 on a real kube-apiserver whose CVO accepts a release only with a signature
// from the lab's throwaway key; an OpenSSH server as the control-plane node the backups run on.
// Commands run in dir with paths relative to it, so what is printed is what a user would type.
type upgradeDemo struct {
	t        *testing.T
	bin, dir string
	lab      *harness.Lab
	up       *harness.Updates
	d        dynamic.Interface
	sshd     *sshtest.Server
	script   string // the stand-in cluster-backup.sh
	began    time.Time
}

// demoCanary is the GPU worker updated first.
const demoCanary = "gpu-0"

// startUpgradeDemo starts the lab's pieces (not the whole lab: no install pipeline runs) while the
// kube-apiserver starts, then the simulated cluster.
func startUpgradeDemo(t *testing.T) *upgradeDemo {
	t.Helper()
	u := &upgradeDemo{t: t, bin: binary(t), dir: t.TempDir(), began: time.Now()}
	src := &harness.Source{Seed: harness.SeedContent, Cache: sourceCache}
	u.up = &harness.Updates{Source: src}
	lab, err := harness.New(filepath.Join(u.dir, "lab"), &harness.Files{}, src, u.up, &harness.Registry{})
	if err != nil {
		t.Fatal(err)
	}
	u.lab = lab
	var wg sync.WaitGroup
	var upErr error
	wg.Add(1)
	go func() { defer wg.Done(); upErr = lab.Up(context.Background()) }()
	t.Cleanup(func() {
		wg.Wait()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = lab.Down(ctx)
	})

	var srv clustertest.Server
	t.Cleanup(srv.Stop)
	cfg := rest.CopyConfig(srv.Config(t))
	cfg.WarningHandler = rest.NoWarnings{} // the simulated driver pods' dotted names draw a warning per create
	u.d = clustertest.Dynamic(t, cfg)
	if err := os.WriteFile(filepath.Join(u.dir, "kubeconfig"), srv.Kubeconfig(t), 0o600); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if upErr != nil {
		t.Fatalf("the lab's source registry, update service and mirror registry: %v", upErr)
	}
	fmt.Fprintf(os.Stdout, "the lab (started in %s):\n%s", time.Since(u.began).Round(100*time.Millisecond), lab.Describe())

	clock := &upgradetest.Clock{Factor: 1}
	upgradetest.Lab(t, u.d, upgradetest.LabOptions{Version: harness.ReleaseVersion, Workers: []string{demoCanary, "gpu-1", "worker-0"},
		GPU: []string{demoCanary, "gpu-1"}}, clock)
	installGPUOperator(t, u.d)
	sim := &upgradetest.Sim{D: u.d, Clock: clock, Catalogs: true, RequireSignatures: true, Keyring: labKeyring(t, filepath.Join(lab.Dir, harness.ReleaseKeyFile))}
	// The CVO's verifier ConfigMap, as the release payload installs it, with the lab key: `upgrade
	// run`'s preflight verifies each hop's signature offline against it before any write (a
	// signature it cannot verify stops the run there, so the demo passing shows they verified).
	key, err := os.ReadFile(filepath.Join(lab.Dir, harness.ReleaseKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	clustertest.Create(t, u.d, clustertest.GVR("", "v1", "configmaps"), map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "release-verification", "namespace": upgrade.SignatureNamespace,
			"annotations": map[string]any{upgrade.VerificationAnnotation: ""}},
		"data": map[string]any{"verifier-public-key-lab": string(key)}})
	sim.Start(t)
	sim.Settle(t)
	(&upgradetest.OLM{D: u.d, Clock: clock, Catalogs: demoCatalogs()}).Start(t)
	u.sshd = sshtest.Start(t)
	u.script = upgradetest.BackupNode(t, u.sshd, "")
	fmt.Fprintf(os.Stdout, "the cluster: %s on a kube-apiserver (master m0; workers %s and gpu-1 with GPUs, worker-0), GPU Operator 25.3.1; the CVO verifies signatures with %s\n",
		harness.ReleaseVersion, demoCanary, filepath.Join("lab", harness.ReleaseKeyFile))
	return u
}

// installGPUOperator installs the GPU Operator 25.3.1 as the lab does (harness/gitsite.go: package
// gpu-operator-certified from the certified catalog's CatalogSource, in nvidia-gpu-operator), with
// one difference: its Subscription follows the channel `stable`, not the lab's `v25.3`. NVIDIA
// declares 25.3 for OpenShift 4.14-4.19 (internal/upgrade/nvidia-matrix.yaml), so a cluster on
// v25.3 cannot go to 4.20 and its plan blocks that hop (TestUpgradePlanAndDeltaMirror shows it);
// in the lab's 4.19+ catalogs `stable` leads from 25.3.1 to 25.10.0 (declared 4.14-4.21), so the
// plan updates the operator after the 4.19 hop and the 4.20 hop passes the gate. Approval is
// Manual: `upgrade run` approves only the InstallPlans the plan names.
func installGPUOperator(t *testing.T, d dynamic.Interface) {
	t.Helper()
	ns, csv := upgradetest.GPUNamespace, "gpu-operator-certified.v25.3.1"
	clustertest.Create(t, d, clustertest.Namespaces, map[string]any{"apiVersion": "v1", "kind": "Namespace",
		"metadata": map[string]any{"name": "openshift-marketplace"}}) // where the mirror's CatalogSources go
	clustertest.Create(t, d, clustertest.ClusterServiceVersions, map[string]any{"apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion",
		"metadata": map[string]any{"name": csv, "namespace": ns},
		"spec":     map[string]any{"displayName": "NVIDIA GPU Operator", "version": "25.3.1", "install": map[string]any{"strategy": "deployment"}}})
	clustertest.MustSetStatus(t, d, clustertest.ClusterServiceVersions, ns, csv, map[string]any{"phase": "Succeeded"}, true)
	clustertest.Create(t, d, clustertest.Subscriptions, map[string]any{"apiVersion": "operators.coreos.com/v1alpha1", "kind": "Subscription",
		"metadata": map[string]any{"name": "gpu-operator-certified", "namespace": ns},
		"spec": map[string]any{"name": "gpu-operator-certified", "channel": "stable", "source": harness.CatalogCertified,
			"sourceNamespace": "openshift-marketplace", "installPlanApproval": "Manual"}})
	clustertest.MustSetStatus(t, d, clustertest.Subscriptions, ns, "gpu-operator-certified", map[string]any{"installedCSV": csv, "currentCSV": csv,
		"state": "AtLatestKnown", "lastUpdated": time.Now().UTC().Format(time.RFC3339)}, true)
}

// demoCatalogs are the lab's certified catalogs as the simulated OLM resolves them: channel
// stable of gpu-operator-certified, each bundle replacing the one before as mirrortest builds it
// (harness content.go for 4.18: up to 25.3.1; releases.go for 4.19-4.21: on to 25.10.0), under
// the CatalogSource names the mirror writes. The Subscription follows the 4.18 one until the run
// moves it to the next minor's: only there does OLM find 25.10.0 and plan its InstallPlan.
func demoCatalogs() upgradetest.Catalogs {
	chain := func(vs ...string) map[string]map[string][]upgradetest.Bundle {
		var bs []upgradetest.Bundle
		for i, v := range vs {
			b := upgradetest.Bundle{Name: "gpu-operator-certified.v" + v, Version: v}
			if i > 0 {
				b.Replaces = "gpu-operator-certified.v" + vs[i-1]
			}
			bs = append(bs, b)
		}
		return map[string]map[string][]upgradetest.Bundle{"gpu-operator-certified": {"stable": bs}}
	}
	c := upgradetest.Catalogs{harness.CatalogCertified: chain("24.9.2", "25.3.1")}
	for _, minor := range []string{"4-19", "4-20", "4-21"} {
		c["cs-certified-operator-index-v"+minor] = chain("24.9.2", "25.3.1", "25.10.0")
	}
	return c
}

// labKeyring reads the public half of the lab's throwaway release key: the simulated CVO's keyring.
func labKeyring(t *testing.T, file string) openpgp.EntityList {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ring, err := openpgp.ReadArmoredKeyRing(f)
	if err != nil || len(ring) != 1 {
		t.Fatalf("%s: %v (%d keys)", file, err, len(ring))
	}
	return ring
}

// bootstrap runs the binary in the demo dir, printing the command line and its output (stdout to
// w, or to the terminal when w is nil; stderr always to the terminal) and what it took; the exit
// code must be want.
func (u *upgradeDemo) bootstrap(w io.Writer, want int, args ...string) {
	u.t.Helper()
	shown := make([]string, len(args))
	for i, a := range args {
		shown[i] = a
		if strings.ContainsAny(a, " ='") {
			shown[i] = "'" + a + "'"
		}
	}
	line := "bootstrap " + strings.Join(shown, " ")
	if f, ok := w.(*os.File); ok {
		line += " > " + filepath.Base(f.Name())
	}
	fmt.Fprintf(os.Stdout, "\n$ %s\n", line)
	cmd := exec.Command(u.bin, args...)
	cmd.Dir = u.dir
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stdout
	if w != nil {
		cmd.Stdout = w
	}
	start := time.Now()
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		u.t.Fatalf("%s: %v", line, err)
	}
	fmt.Fprintf(os.Stdout, "# exit %d in %s (demo at %s)\n", code, time.Since(start).Round(100*time.Millisecond), time.Since(u.began).Round(time.Second))
	if code != want {
		u.t.Fatalf("%s: exit %d, want %d", line, code, want)
	}
}

// file creates (truncates) a file in the demo dir for a command's stdout.
func (u *upgradeDemo) file(name string) *os.File {
	u.t.Helper()
	f, err := os.Create(filepath.Join(u.dir, name))
	if err != nil {
		u.t.Fatal(err)
	}
	u.t.Cleanup(func() { _ = f.Close() })
	return f
}

// read reads a file of the demo dir.
func (u *upgradeDemo) read(name string) []byte {
	u.t.Helper()
	b, err := os.ReadFile(filepath.Join(u.dir, name))
	if err != nil {
		u.t.Fatal(err)
	}
	return b
}

// write writes a file into the demo dir and returns its name.
func (u *upgradeDemo) write(name, body string) string {
	u.t.Helper()
	writeAt(u.t, filepath.Join(u.dir, name), []byte(body))
	return name
}
