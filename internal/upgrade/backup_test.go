package upgrade_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/bootstrap-dev/bootstrap/internal/cluster/clustertest"
	"github.com/bootstrap-dev/bootstrap/internal/filehash"
	"github.com/bootstrap-dev/bootstrap/internal/gather"
	"github.com/bootstrap-dev/bootstrap/internal/gather/sshtest"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade/upgradetest"
)

func backupNode(t *testing.T, script string) (upgrade.BackupOptions, *sshtest.Server) {
	t.Helper()
	s := sshtest.Start(t)
	sp := upgradetest.BackupNode(t, s, script)
	signer, err := gather.LoadSigner(s.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	d := &gather.Dialer{User: s.User, Signer: signer, Keys: gather.NewHostKeys(filepath.Join(t.TempDir(), "known_hosts"))}
	return upgrade.BackupOptions{Dialer: d, Node: "m0", Address: s.Addr, Script: sp,
		RemoteDir: filepath.Join(t.TempDir(), "backup-4.18.5"), Dir: filepath.Join(t.TempDir(), "backups", "4.18.5")}, s
}

// The backup over a real OpenSSH server: the script runs on the "node", both files come to the
// jump host with the hashes the node's sha256sum gives, and the host key is pinned.
func TestTakeBackupOverSSH(t *testing.T) {
	o, _ := backupNode(t, "")
	b, err := upgrade.TakeBackup(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Files) != 2 || !strings.HasPrefix(b.Files[0].Name, "snapshot_") || !strings.HasPrefix(b.Files[1].Name, "static_kuberesources_") {
		t.Fatalf("files %+v", b.Files)
	}
	for _, f := range b.Files {
		sum, size, err := filehash.SHA256(filepath.Join(o.Dir, f.Name))
		if err != nil || sum != f.SHA256 || size != f.Size || size == 0 {
			t.Errorf("%s on the jump host: %s %d %v, recorded %s %d", f.Name, sum, size, err, f.SHA256, f.Size)
		}
		remote, _, _ := filehash.SHA256(filepath.Join(o.RemoteDir, f.Name))
		if remote != f.SHA256 {
			t.Errorf("%s: the node's file hashes to %s, the copy to %s", f.Name, remote, f.SHA256)
		}
	}
	if kh, err := os.ReadFile(o.Dialer.Keys.Path()); err != nil || len(kh) == 0 {
		t.Errorf("the node's host key was not pinned: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(o.Dir, "*.part")); len(left) > 0 {
		t.Errorf("partial files left: %v", left)
	}
}

// A script that leaves the static resources out, or fails, gives a *BackupError with a remedy.
func TestTakeBackupRefusesAnIncompleteBackup(t *testing.T) {
	o, _ := backupNode(t, strings.Replace(upgradetest.BackupScript, "head -c 20000", "exit 0; head -c 20000", 1))
	_, err := upgrade.TakeBackup(context.Background(), o)
	var be *upgrade.BackupError
	if !errors.As(err, &be) || !strings.Contains(err.Error(), "static_kuberesources") || !strings.Contains(be.Remedy(), "does not start without its backup") {
		t.Fatalf("got %v", err)
	}
	o, _ = backupNode(t, "#!/bin/sh\necho 'etcdctl: context deadline exceeded' >&2\nexit 1\n")
	_, err = upgrade.TakeBackup(context.Background(), o)
	if !errors.As(err, &be) || !strings.Contains(err.Error(), "context deadline exceeded") {
		t.Fatalf("a failing script: %v", err)
	}
}

// In a run the backup is the hop's first step and is journaled with its hashes; a backup that
// fails stops the hop before anything of it reaches the cluster.
func TestRunTakesTheBackupFirst(t *testing.T) {
	for _, good := range []bool{true, false} {
		script := ""
		if !good {
			script = "#!/bin/sh\necho 'etcd member unhealthy' >&2\nexit 1\n"
		}
		bo, _ := backupNode(t, script)
		l := newLab(t, upgradetest.LabOptions{Version: "4.17.10", Workers: []string{"w0", "w1"}}, upgradetest.Faults{})
		j := &upgradetest.Journal{}
		o := l.opts(t)
		o.NoBackup = ""
		o.Backup = func(ctx context.Context) (*upgrade.Backup, error) { return upgrade.TakeBackup(ctx, bo) }
		historyAtAfter := ""
		o.AfterBackup = func(ctx context.Context) (*upgrade.Backup, error) {
			h, _, _ := unstructured.NestedSlice(l.get(t, "cv", "").Object, "status", "history")
			if len(h) > 0 {
				e := h[0].(map[string]any)
				historyAtAfter = e["version"].(string) + " " + e["state"].(string)
			}
			ao := bo
			ao.Dir = filepath.Join(filepath.Dir(bo.Dir), "4.18.5-after")
			return upgrade.TakeBackup(ctx, ao)
		}
		_, err := upgrade.Run(context.Background(), l.c, j, o)
		if !good {
			var be *upgrade.BackupError
			if !errors.As(err, &be) || strings.Join(j.Keys, " ") != "4.18.5/contract" || l.cvPatch.Load() != 0 {
				t.Fatalf("a failed backup: err %v, journal %v, %d ClusterVersion writes", err, j.Keys, l.cvPatch.Load())
			}
			if _, err := l.d.Resource(clustertest.MachineConfigPools).Get(context.Background(), "worker-canary", metav1.GetOptions{}); err == nil {
				t.Error("the canary pool was created without a backup")
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if j.Keys[1] != "4.18.5/"+upgrade.StepBackup || j.Keys[2] != "4.18.5/"+upgrade.StepSignatures {
			t.Errorf("journal order %v: the backup must come right after the contract", j.Keys)
		}
		var rec, after upgrade.Backup
		j.Done("4.18.5/"+upgrade.StepBackup, &rec)
		if len(rec.Files) != 2 || len(rec.Files[0].SHA256) != 64 || rec.Node != "m0" {
			t.Errorf("journaled backup %+v", rec)
		}
		// The post-hop backup: the same code, after close saw history Completed, journaled
		// with its own hashes.
		n := len(j.Keys)
		if n < 3 || j.Keys[n-3] != "4.18.5/"+upgrade.StepClose || j.Keys[n-2] != "4.18.5/"+upgrade.StepAfterBackup {
			t.Fatalf("journal %v: the post-hop backup must follow close", j.Keys)
		}
		if !j.Done("4.18.5/"+upgrade.StepAfterBackup, &after) || len(after.Files) != 2 || len(after.Files[1].SHA256) != 64 || after.Node != "m0" {
			t.Errorf("journaled post-hop backup %+v", after)
		}
		if !after.At.After(rec.At) {
			t.Errorf("post-hop backup at %s, not after the pre-hop one at %s", after.At, rec.At)
		}
		if historyAtAfter != "4.18.5 Completed" {
			t.Errorf("the post-hop backup was taken with history %q, want 4.18.5 Completed", historyAtAfter)
		}
		if len(after.Files) == 0 || after.Dir == rec.Dir {
			t.Errorf("post-hop backup %+v beside the pre-hop one in %s", after, rec.Dir)
		} else if _, err := os.Stat(filepath.Join(after.Dir, after.Files[0].Name)); err != nil {
			t.Errorf("post-hop backup files in %s (pre-hop in %s): %v", after.Dir, rec.Dir, err)
		}
	}
	// Neither a backup nor a reason: refused before the hop starts.
	l := newLab(t, upgradetest.LabOptions{Version: "4.17.10", Workers: []string{"w0"}}, upgradetest.Faults{})
	o := l.opts(t)
	o.NoBackup = ""
	j := &upgradetest.Journal{}
	if _, err := upgrade.Run(context.Background(), l.c, j, o); !errors.Is(err, upgrade.ErrNoBackup) || l.cvPatch.Load() != 0 {
		t.Fatalf("no backup: %v", err)
	}
}

// A run killed after the backup and before journaling it: the resumed run finds the backup
// complete in its directory (backup.json, every file hashing as recorded) and reuses it instead
// of running the script again; a file changed since is not reused, a new backup is taken.
func TestTakeBackupReusesTheOneAKilledRunTook(t *testing.T) {
	o, _ := backupNode(t, upgradetest.BackupScript+"echo ran >> \"$1.runs\"\n")
	o.Reuse = upgrade.DefaultBackupReuse
	runs := func() int {
		b, _ := os.ReadFile(o.RemoteDir + ".runs")
		return strings.Count(string(b), "ran")
	}
	first, err := upgrade.TakeBackup(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	again, err := upgrade.TakeBackup(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if runs() != 1 || again.Reused == "" || len(again.Files) != 2 || again.Files[0] != first.Files[0] || again.Files[1] != first.Files[1] {
		t.Fatalf("script ran %d times; the resumed backup %+v, the first %+v", runs(), again, first)
	}
	if err := os.WriteFile(filepath.Join(o.Dir, first.Files[0].Name), []byte("truncated"), 0o600); err != nil {
		t.Fatal(err)
	}
	third, err := upgrade.TakeBackup(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if runs() != 2 || third.Reused != "" {
		t.Errorf("a changed file was reused: script ran %d times, %+v", runs(), third)
	}
	// a backup.json naming a file outside its directory (edited by hand or planted) is not
	// reused, even when that file hashes as recorded: a new backup is taken
	same, err := os.ReadFile(filepath.Join(o.Dir, third.Files[0].Name)) // same bytes: only the name is wrong
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(filepath.Dir(o.Dir), "elsewhere.db"), same, 0o600); err != nil {
		t.Fatal(err)
	}
	m := filepath.Join(o.Dir, "backup.json")
	raw, err := os.ReadFile(m)
	if err != nil {
		t.Fatal(err)
	}
	planted := strings.Replace(string(raw), `"`+third.Files[0].Name+`"`, `"../elsewhere.db"`, 1)
	if planted == string(raw) {
		t.Fatalf("could not plant a name in %s", raw)
	}
	if err := os.WriteFile(m, []byte(planted), 0o600); err != nil {
		t.Fatal(err)
	}
	fourth, err := upgrade.TakeBackup(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if runs() != 3 || fourth.Reused != "" {
		t.Errorf("a backup.json naming ../elsewhere.db was reused: script ran %d times, %+v", runs(), fourth)
	}
}
