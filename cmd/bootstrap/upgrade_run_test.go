package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/bootstrap-dev/bootstrap/internal/cluster/clustertest"
	"github.com/bootstrap-dev/bootstrap/internal/filehash"
	"github.com/bootstrap-dev/bootstrap/internal/gather/sshtest"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade/upgradetest"
)

// The commands against the simulated cluster on a real kube-apiserver: preflight passes with
// the PDB named as a warning; run refuses without the rollback contract, changing nothing; with
// it, the hop completes and is journaled in upgrade/journal.jsonl; a second run skips it.
func TestUpgradePreflightAndRunCommands(t *testing.T) {
	var srv clustertest.Server
	t.Cleanup(srv.Stop)
	d := clustertest.Dynamic(t, srv.Config(t))
	clock := &upgradetest.Clock{Factor: 1}
	upgradetest.Lab(t, d, upgradetest.LabOptions{Version: "4.17.10", Workers: []string{"w0", "w1"}}, clock)
	upgradetest.BlockingPDB(t, d, "db", "edge-0") // a node outside the pools: named, never drained here
	sim := &upgradetest.Sim{D: d, Clock: clock}
	sim.Start(t)
	sim.Settle(t)

	dir := t.TempDir()
	kc := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kc, srv.Kubeconfig(t), 0o600); err != nil {
		t.Fatal(err)
	}
	plan, _ := json.Marshal(upgrade.Plan{From: "4.17.10", To: "4.18.5", Hops: []upgrade.Hop{{From: "4.17.10", To: "4.18.5", Payload: upgradetest.Payload("4.18.5")}}})
	pf := filepath.Join(dir, "plan.json")
	if err := os.WriteFile(pf, plan, 0o644); err != nil {
		t.Fatal(err)
	}
	exec := func(stdin string, args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := Execute(append([]string{"--dir", filepath.Join(dir, ".bootstrap")}, args...), strings.NewReader(stdin), &out, &errb)
		return code, out.String(), errb.String()
	}

	code, out, errs := exec("", "upgrade", "preflight", "--plan", pf, "--kubeconfig", kc)
	if code != 0 || !strings.Contains(out, "WARN  pdb") || !strings.Contains(out, "PodDisruptionBudget workload/db") {
		t.Fatalf("preflight: exit %d\n%s\n%s", code, out, errs)
	}

	code, _, errs = exec("\n", "upgrade", "run", "--plan", pf, "--kubeconfig", kc, "--soak", "0s", "--poll", "50ms")
	if code != exitInvalid || !strings.Contains(errs, "Rollback contract for the hop 4.17.10 -> 4.18.5") || !strings.Contains(errs, "no rollback") {
		t.Fatalf("run without the contract: exit %d\n%s", code, errs)
	}
	cv, err := d.Resource(clustertest.ClusterVersions).Get(context.Background(), "version", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if du, _, _ := unstructured.NestedMap(cv.Object, "spec", "desiredUpdate"); du != nil {
		t.Fatalf("desiredUpdate set without the contract: %v", du)
	}

	code, _, errs = exec("", "upgrade", "run", "--plan", pf, "--kubeconfig", kc, "--soak", "0s", "--accept-rollback-contract", "Jane Doe")
	if code != exitFailure || !strings.Contains(errs, "--no-etcd-backup REASON") {
		t.Fatalf("run without a backup node: exit %d\n%s", code, errs)
	}

	sshd := sshtest.Start(t)
	script := upgradetest.BackupNode(t, sshd, "")
	remote := filepath.Join(t.TempDir(), "assets", "backup")
	backup := []string{"--backup-node", "m0=" + sshd.Addr, "--ssh-key", sshd.KeyFile, "--ssh-user", sshd.User, "--backup-script", script, "--backup-dir", remote}
	// the settings: maxUnavailable from the profile's upgrade section, the soak from its flag
	profile, muLine := labSiteWithUpgrade(t, "upgrade:\n  maxUnavailable: 2\n")
	code, out, errs = exec("", append([]string{"-f", profile, "upgrade", "run", "--plan", pf, "--kubeconfig", kc, "--soak", "0s", "--poll", "50ms", "--accept-rollback-contract", "Jane Doe"}, backup...)...)
	if code != 0 || !strings.Contains(out, "every hop of the plan completed") {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, errs)
	}
	j, err := os.ReadFile(filepath.Join(dir, ".bootstrap", "upgrade", "journal.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	snaps, _ := filepath.Glob(filepath.Join(dir, ".bootstrap", "upgrade", "backups", "4.18.5", "snapshot_*.db"))
	if len(snaps) != 1 {
		t.Errorf("the hop's snapshot on the jump host: %v", snaps)
	} else if sum, _, _ := filehash.SHA256(snaps[0]); !bytes.Contains(j, []byte(sum)) {
		t.Errorf("the journal lacks the snapshot's SHA-256 %s", sum)
	}
	if kh, err := os.ReadFile(filepath.Join(dir, ".bootstrap", "known_hosts")); err != nil || !bytes.Contains(kh, []byte(strconv.Itoa(sshd.Port))) {
		t.Errorf("the node's host key is not pinned in the work dir's known_hosts: %v", err)
	}
	for _, step := range []string{`"4.18.5/settings"`, `"source":"flag --soak"`, fmt.Sprintf(`"source":"profile %s:%d:19"`, profile, muLine), `"4.18.5/contract"`, `"4.18.5/etcd-backup"`, `"4.18.5/desired-update-intent"`, `"4.18.5/desired-update"`, `"4.18.5/canary-done"`, `"4.18.5/close"`, `"Jane Doe"`} {
		if !bytes.Contains(j, []byte(step)) {
			t.Errorf("journal lacks %s", step)
		}
	}
	code, out, errs = exec("", "report")
	if code != 0 {
		t.Fatalf("report: exit %d\n%s", code, errs)
	}
	snapSum := ""
	if len(snaps) == 1 {
		snapSum, _, _ = filehash.SHA256(snaps[0])
	}
	for _, want := range []string{"## Upgrade", "upgrade's own journal: ", "hash chain **verified**", "### hop-4.18.5: succeeded",
		"rollback contract accepted by Jane Doe", "etcd backup before the hop on m0: snapshot_", "sha256 " + snapSum, "etcd backup after the hop on m0: snapshot_", "paused: worker", "unpaused: worker (maxUnavailable 2)",
		fmt.Sprintf("settings: soak 0s (flag --soak); maxUnavailable 2 (profile %s:%d:19); canary the first worker by name (default); canaryPool worker-canary (default)", profile, muLine),
		"desiredUpdate set to 4.18.5", "about to set desiredUpdate to 4.18.5", "every pool updated", "signature verified by the CVO: true", "canary w0 on rendered-worker-canary-4.18.5",
		"irdma: blacklisted in rendered-worker-canary-4.18.5", "node transitions: m0 rendered-master-4.18.5 at"} {
		if !strings.Contains(out, want) {
			t.Errorf("the report's upgrade section lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("report:\n%s", out)
	}
	code, out, errs = exec("", "upgrade", "run", "--plan", pf, "--kubeconfig", kc, "--soak", "0s", "--accept-rollback-contract", "Jane Doe", "--no-etcd-backup", "done already")
	if code != 0 {
		t.Fatalf("second run: exit %d\n%s\n%s", code, out, errs)
	}
	if j2, _ := os.ReadFile(filepath.Join(dir, ".bootstrap", "upgrade", "journal.jsonl")); bytes.Count(j2, []byte(`"4.18.5/desired-update"`)) != 1 {
		t.Error("the second run journaled desired-update again")
	}
	// a plan older than the cluster (made at 4.16.30, the cluster is at 4.18.5 now) is refused
	old, _ := json.Marshal(upgrade.Plan{From: "4.16.30", To: "4.17.10", Hops: []upgrade.Hop{{From: "4.16.30", To: "4.17.10", Payload: upgradetest.Payload("4.17.10")}}})
	if err := os.WriteFile(pf, old, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, verb := range []string{"preflight", "run"} {
		args := []string{"upgrade", verb, "--plan", pf, "--kubeconfig", kc}
		if verb == "run" {
			args = append(args, "--accept-rollback-contract", "Jane Doe")
		}
		code, _, errs = exec("", args...)
		if code != exitInvalid || !strings.Contains(errs, "the cluster is at 4.18.5 now") || !strings.Contains(errs, "remedy: plan again") {
			t.Errorf("%s with a plan older than the cluster: exit %d\n%s", verb, code, errs)
		}
	}
	// a plan written by `upgrade plan` exiting 2 (it names a blocker) never starts a hop
	blocked, _ := json.Marshal(upgrade.Plan{From: "4.18.5", To: "4.19.2", Hops: []upgrade.Hop{{From: "4.18.5", To: "4.19.2", Payload: upgradetest.Payload("4.19.2")}},
		Blockers: []string{"hop-4.19.2: gpu-operator-certified 25.3.1: declares OpenShift 4.14-4.18, not 4.19"}})
	if err := os.WriteFile(pf, blocked, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs = exec("", "upgrade", "run", "--plan", pf, "--kubeconfig", kc, "--accept-rollback-contract", "Jane Doe")
	if code != exitInvalid || !strings.Contains(errs, "the plan has 1 blocker(s): hop-4.19.2: gpu-operator-certified") {
		t.Errorf("run with a blocked plan: exit %d\n%s", code, errs)
	}
	if j3, _ := os.ReadFile(filepath.Join(dir, ".bootstrap", "upgrade", "journal.jsonl")); bytes.Contains(j3, []byte(`"4.19.2/`)) {
		t.Error("a blocked plan journaled a step of its hop")
	}
}
