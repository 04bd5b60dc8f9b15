//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/cluster/clustertest"
	"github.com/bootstrap-dev/bootstrap/internal/gather/sshtest"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade/upgradetest"
)

// TestDemoUpgrade is `make demo-upgrade`: the built binary upgrades a simulated cluster across two
// minors (4.17.10 -> 4.18.5 -> 4.19.2), canary first on a GPU worker, each hop after its etcd
// backup over a real OpenSSH server, then writes the evidence report. The cluster is the
// simulated CVO, MCO and GPU operator on a real kube-apiserver (internal/upgrade/upgradetest);
// what the binary prints goes to stdout as it runs.
func TestDemoUpgrade(t *testing.T) {
	bin := binary(t)
	var srv clustertest.Server
	t.Cleanup(srv.Stop)
	d := clustertest.Dynamic(t, srv.Config(t))
	clock := &upgradetest.Clock{Factor: 1}
	upgradetest.Lab(t, d, upgradetest.LabOptions{Version: "4.17.10", Workers: []string{"gpu-0", "gpu-1", "worker-0"}, GPU: []string{"gpu-0", "gpu-1"}}, clock)
	sim := &upgradetest.Sim{D: d, Clock: clock, RequireSignatures: false}
	sim.Start(t)
	sim.Settle(t)
	sshd := sshtest.Start(t)
	script := upgradetest.BackupNode(t, sshd, "")

	dir := t.TempDir()
	kc := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kc, srv.Kubeconfig(t), 0o600); err != nil {
		t.Fatal(err)
	}
	plan, _ := json.Marshal(upgrade.Plan{From: "4.17.10", To: "4.19.2", Hops: []upgrade.Hop{
		{From: "4.17.10", To: "4.18.5", Payload: upgradetest.Payload("4.18.5")},
		{From: "4.18.5", To: "4.19.2", Payload: upgradetest.Payload("4.19.2")}}})
	pf := filepath.Join(dir, "plan.json")
	if err := os.WriteFile(pf, plan, 0o644); err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(dir, ".bootstrap")
	run := func(w io.Writer, args ...string) {
		t.Helper()
		fmt.Fprintf(os.Stdout, "\n$ bootstrap %s\n", strings.Join(args, " "))
		cmd := exec.CommandContext(context.Background(), bin, append([]string{"--dir", work}, args...)...)
		cmd.Stdout, cmd.Stderr = w, os.Stdout
		if err := cmd.Run(); err != nil {
			t.Fatalf("bootstrap %s: %v", args[0], err)
		}
	}
	run(os.Stdout, "upgrade", "run", "--plan", pf, "--kubeconfig", kc, "--canary", "gpu-0", "--soak", "5s", "--poll", "200ms",
		"--backup-node", "master-0="+sshd.Addr, "--ssh-key", sshd.KeyFile, "--ssh-user", sshd.User, "--backup-script", script,
		"--backup-dir", filepath.Join(dir, "node-assets"), "--accept-rollback-contract", "Demo User")
	var rep strings.Builder
	run(&rep, "report")
	md := rep.String()
	i := strings.Index(md, "## Upgrade")
	if i < 0 {
		t.Fatalf("the report has no upgrade section:\n%s", md)
	}
	sec := md[i:]
	if j := strings.Index(sec, "\n## Files generated"); j > 0 {
		sec = sec[:j]
	}
	fmt.Fprintf(os.Stdout, "\n%s\n", sec)
	for _, want := range []string{"### hop-4.18.5: succeeded", "### hop-4.19.2: succeeded", "hash chain **verified**",
		"GPU driver pod " + upgradetest.GPUNamespace + "/nvidia-driver-daemonset-" + upgradetest.OSBuild("4.19.2") + "-gpu-0 Ready"} {
		if !strings.Contains(sec, want) {
			t.Errorf("the upgrade section lacks %q", want)
		}
	}
}
