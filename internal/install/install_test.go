package install_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/cluster"
	"github.com/bootstrap-dev/bootstrap/internal/cluster/clustertest"
	"github.com/bootstrap-dev/bootstrap/internal/install"
	"github.com/bootstrap-dev/bootstrap/internal/install/installtest"
)

var server clustertest.Server

func TestMain(m *testing.M) {
	if bin := os.Getenv("WAITFOR_CHILD_BIN"); bin != "" {
		// the child of TestWaitForDiesWithBootstrap: bootstrap following a hanging install
		err := install.WaitFor(context.Background(), bin, os.Getenv("WAITFOR_CHILD_ASSETS"), install.BootstrapComplete, 0, nil)
		fmt.Fprintln(os.Stderr, "wait-for returned:", err)
		os.Exit(3)
	}
	code := m.Run()
	server.Stop()
	os.Exit(code)
}

// fakeInstaller stands in for openshift-install (which cannot run without the nodes): it checks
// its arguments, prints lines shaped like the installer's logrus output on stdout and stderr, and
// fails or hangs when the asset dir holds a "fail-<target>" or "hang" file (hanging, it writes its
// pid to installer.pid first).
const fakeInstaller = `#!/bin/sh
[ "$1 $2 $4 $6 $7" = "agent wait-for --dir --log-level info" ] || { echo "bad args: $*" >&2; exit 2; }
target=$3 dir=$5
echo "level=info msg=\"Waiting for $target\""
sleep 0.2
echo "level=info msg=\"Host master-1: validation 'ntp-synced' that used to succeed is now failing\"" >&2
[ -f "$dir/hang" ] && { echo $$ >"$dir/installer.pid"; sleep 30; }
if [ -f "$dir/fail-$target" ]; then
  echo "level=fatal msg=\"cluster has stopped installing... working to recover installation, last seen was: installing\""
  exit 1
fi
echo "level=info msg=\"$target done\""
`

func installer(t *testing.T) (bin, assets string) {
	dir := t.TempDir()
	bin = filepath.Join(dir, "openshift-install")
	if err := os.WriteFile(bin, []byte(fakeInstaller), 0o755); err != nil {
		t.Fatal(err)
	}
	assets = filepath.Join(dir, "assets")
	if err := os.MkdirAll(filepath.Join(assets, "auth"), 0o700); err != nil {
		t.Fatal(err)
	}
	return bin, assets
}

func TestWaitForStreamsLinesAndReportsFailureAndTimeout(t *testing.T) {
	bin, assets := installer(t)
	var lines []string
	var mu sync.Mutex
	line := func(l string) { mu.Lock(); lines = append(lines, l); mu.Unlock() }
	if err := install.WaitFor(context.Background(), bin, assets, install.BootstrapComplete, 0, line); err != nil {
		t.Fatal(err)
	}
	if len(lines) != 3 || !strings.Contains(lines[1], "ntp-synced") || !strings.Contains(lines[2], "bootstrap-complete done") {
		t.Fatalf("lines: %q", lines)
	}
	touch(t, filepath.Join(assets, "fail-install-complete"))
	err := install.WaitFor(context.Background(), bin, assets, install.InstallComplete, 0, nil)
	var we *install.WaitForError
	if !errors.As(err, &we) || we.ExitCode != 1 || !strings.Contains(err.Error(), "last seen was: installing") {
		t.Fatalf("want WaitForError with the installer's last line, got %v", err)
	}
	touch(t, filepath.Join(assets, "hang"))
	start := time.Now()
	err = install.WaitFor(context.Background(), bin, assets, install.BootstrapComplete, 500*time.Millisecond, nil)
	if !errors.As(err, &we) || !we.TimedOut || time.Since(start) > 5*time.Second {
		t.Fatalf("want a timeout that stops the installer promptly, got %v after %s", err, time.Since(start))
	}
}

func touch(t *testing.T, p string) {
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

func cond(typ, status, reason, msg string) map[string]any {
	return map[string]any{"type": typ, "status": status, "reason": reason, "message": msg, "lastTransitionTime": "2026-01-01T00:00:00Z"}
}

// seedCluster plays the cluster-version operator, one ClusterOperator and the kubelet of master-0.
func seedCluster(t *testing.T) {
	d := clustertest.Dynamic(t, server.Config(t))
	clustertest.Create(t, d, clustertest.ClusterVersions, map[string]any{"apiVersion": "config.openshift.io/v1", "kind": "ClusterVersion",
		"metadata": map[string]any{"name": "version"}, "spec": map[string]any{"clusterID": "0b5f3c2e-1d4a-4f6b-8e9c-7a2d1b3c4e5f"}})
	clustertest.MustSetStatus(t, d, clustertest.ClusterVersions, "", "version", map[string]any{
		"desired":            map[string]any{"version": "4.20.3", "image": "registry.site.example:8443/ocp/release@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"},
		"observedGeneration": int64(1), "versionHash": "abc", "availableUpdates": nil,
		"conditions": []any{cond("Available", "True", "", "Done applying 4.20.3"), cond("Failing", "False", "", "")},
	}, true)
	clustertest.Create(t, d, clustertest.ClusterOperators, map[string]any{"apiVersion": "config.openshift.io/v1", "kind": "ClusterOperator", "metadata": map[string]any{"name": "kube-apiserver"}, "spec": map[string]any{}})
	clustertest.MustSetStatus(t, d, clustertest.ClusterOperators, "", "kube-apiserver", map[string]any{"conditions": []any{cond("Available", "True", "AsExpected", ""), cond("Degraded", "False", "AsExpected", "")}}, true)
	clustertest.Create(t, d, clustertest.Nodes, map[string]any{"apiVersion": "v1", "kind": "Node", "metadata": map[string]any{"name": "master-0"}})
	clustertest.MustSetStatus(t, d, clustertest.Nodes, "", "master-0", map[string]any{"conditions": []any{cond("Ready", "True", "KubeletReady", "kubelet is posting ready status")}}, true)
}

func TestRunFollowsTheInstallToAHealthyCluster(t *testing.T) {
	seedCluster(t)
	bin, assets := installer(t)
	if err := os.WriteFile(filepath.Join(assets, "auth", "kubeconfig"), server.Kubeconfig(t), 0o600); err != nil {
		t.Fatal(err)
	}
	api := installtest.New("watcher-jwt")
	defer api.Close()
	api.SetHost("master-1", "master", "installing", "Installation is in progress")
	api.SetValidation("master-1", "network", "ntp-synced", "failure", "Host couldn't synchronize with any NTP server")
	work := t.TempDir()
	var mu sync.Mutex
	var lines, findings []string
	opts := install.Options{
		Installer: bin, AssetDir: assets, WorkDir: work, Nodes: []string{"master-0"},
		Follower:      &install.Follower{BaseURL: api.URL, WatcherToken: "watcher-jwt", Interval: 20 * time.Millisecond},
		ClientOptions: []cluster.Option{cluster.WithPollInterval(100 * time.Millisecond)}, ClusterTimeout: 20 * time.Second,
	}
	cb := install.Callbacks{
		Line:    func(target, l string) { mu.Lock(); lines = append(lines, target+": "+l); mu.Unlock() },
		Finding: func(f install.Finding) { mu.Lock(); findings = append(findings, f.String()); mu.Unlock() },
	}
	res, err := install.Run(context.Background(), opts, cb)
	if err != nil {
		t.Fatal(err)
	}
	if res.Cluster.Version != "4.20.3" || res.Cluster.Operators != 1 || len(res.Cluster.Nodes) != 1 {
		t.Fatalf("cluster: %+v", res.Cluster)
	}
	st, err := os.Stat(filepath.Join(work, "kubeconfig"))
	if err != nil || st.Mode().Perm() != 0o600 || res.Kubeconfig != filepath.Join(work, "kubeconfig") {
		t.Fatalf("kubeconfig: %v %v", st, err)
	}
	if len(lines) != 6 || !strings.HasPrefix(lines[5], "install-complete: ") {
		t.Fatalf("installer lines: %q", lines)
	}
	if !strings.Contains(strings.Join(findings, "\n"), "host master-1: validation ntp-synced failure") {
		t.Fatalf("findings: %q", findings)
	}

	t.Run("install failure keeps the failing validations", func(t *testing.T) {
		touch(t, filepath.Join(assets, "fail-install-complete"))
		res, err := install.Run(context.Background(), opts, install.Callbacks{})
		var we *install.WaitForError
		if !errors.As(err, &we) || we.Target != install.InstallComplete {
			t.Fatalf("want WaitForError, got %v", err)
		}
		// The cluster-level validation first, then the host's: the likely reason.
		if len(res.Failing) != 2 || res.Failing[1].Validation != "ntp-synced" || res.Failing[1].Host != "master-1" {
			t.Fatalf("failing: %+v", res.Failing)
		}
		os.Remove(filepath.Join(assets, "fail-install-complete"))
	})

	t.Run("a degraded operator fails the checks", func(t *testing.T) {
		d := clustertest.Dynamic(t, server.Config(t))
		clustertest.MustSetStatus(t, d, clustertest.ClusterOperators, "", "kube-apiserver", map[string]any{"conditions": []any{
			cond("Available", "True", "AsExpected", ""), cond("Degraded", "True", "NodeInstaller_InstallerPodFailed", "1 nodes are failing on revision 7")}}, true)
		c, err := cluster.New(server.Config(t), cluster.WithPollInterval(100*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		_, err = install.CheckCluster(context.Background(), c, []string{"master-0"}, 500*time.Millisecond, nil)
		var de *install.DegradedError
		if !errors.As(err, &de) || !strings.Contains(err.Error(), "kube-apiserver Degraded (NodeInstaller_InstallerPodFailed): 1 nodes are failing on revision 7") {
			t.Fatalf("want DegradedError, got %v", err)
		}
	})
}
