package stages

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/cluster"
	"github.com/bootstrap-dev/bootstrap/internal/cluster/clustertest"
	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade/upgradetest"
)

// A hop through the runner and its real journal, failed right after spec.desiredUpdate was
// written and before the step was journaled: the next run resumes the same attempt, reads the
// ClusterVersion, journals the write without making it again, and finishes the hop; a third
// run skips the finished hop.
func TestUpgradeHopResumesThroughTheJournal(t *testing.T) {
	cfg := apiServer.Config(t)
	d := clustertest.Dynamic(t, cfg)
	clock := &upgradetest.Clock{Factor: 1200}
	upgradetest.Lab(t, d, upgradetest.LabOptions{Version: "4.17.10", Workers: []string{"w0", "w1"}}, clock)
	sim := &upgradetest.Sim{D: d, Clock: clock}
	sim.Start(t)
	sim.Settle(t)
	var cvWrites atomic.Int32
	c, err := cluster.New(cfg, cluster.WithChangeHook(func(a cluster.Applied) {
		if a.Kind == "ClusterVersion" {
			cvWrites.Add(1)
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	killed := errors.New("killed between the write and its record")
	kill := true
	hop := &UpgradeHop{Client: c, Options: upgrade.RunOptions{
		Hop:        upgrade.Hop{From: "4.17.10", To: "4.18.5", Payload: upgradetest.Payload("4.18.5")},
		AcceptedBy: "Jane Doe", Soak: time.Minute, Poll: 25 * time.Millisecond, Now: clock.Now, NoBackup: "the lab has no etcd",
		Crash: func(step string) error {
			if step == upgrade.StepDesired && kill {
				return killed
			}
			return nil
		},
	}}
	work := t.TempDir()
	r := &pipeline.Runner{Stages: []pipeline.Stage{hop}, WorkDir: work, Command: "upgrade run"}
	if err := r.Run(context.Background(), pipeline.RunOptions{}); !errors.Is(err, killed) {
		t.Fatalf("first run: %v", err)
	}
	kill = false
	if err := r.Run(context.Background(), pipeline.RunOptions{}); err != nil {
		t.Fatalf("resume: %v", err)
	}
	if err := r.Run(context.Background(), pipeline.RunOptions{}); err != nil {
		t.Fatalf("third run: %v", err)
	}
	if n := cvWrites.Load(); n != 1 {
		t.Errorf("ClusterVersion written %d times, want once", n)
	}
	j, err := os.ReadFile(filepath.Join(work, "journal.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		s string
		n int
	}{{`"step":"4.18.5/desired-update-intent"`, 1}, {`"step":"4.18.5/desired-update"`, 1}, {`"step":"4.18.5/contract"`, 1},
		{`"step":"4.18.5/signatures"`, 1}, {`"step":"4.18.5/close"`, 1}, {`not set twice`, 1}} {
		if got := bytes.Count(j, []byte(tc.s)); got != tc.n {
			t.Errorf("journal holds %s %d times, want %d", tc.s, got, tc.n)
		}
	}
}
