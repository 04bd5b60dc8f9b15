package report

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/cluster"
	"github.com/bootstrap-dev/bootstrap/internal/cluster/clustertest"
	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
	"github.com/bootstrap-dev/bootstrap/internal/stages"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade/upgradetest"
)

// A hop killed while the workers roll (once the first worker after the canary was seen on the
// new config) and resumed by another run: the report lists every node's transition, and those the
// killed run saw carry the times it journaled, not the resumed run's.
func TestUpgradeReportKeepsNodeTimesOverAResume(t *testing.T) {
	var srv clustertest.Server
	t.Cleanup(srv.Stop)
	cfg := srv.Config(t)
	d := clustertest.Dynamic(t, cfg)
	clock := &upgradetest.Clock{Factor: 1200}
	upgradetest.Lab(t, d, upgradetest.LabOptions{Version: "4.17.10"}, clock)
	sim := &upgradetest.Sim{D: d, Clock: clock}
	sim.Start(t)
	sim.Settle(t)
	c, err := cluster.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	dir := filepath.Join(work, UpgradeDir)
	hop := &stages.UpgradeHop{Client: c, Options: upgrade.RunOptions{
		Hop:        upgrade.Hop{From: "4.17.10", To: "4.18.5", Payload: upgradetest.Payload("4.18.5")},
		AcceptedBy: "Jane Doe", Canary: "w0", Poll: 25 * time.Millisecond, Now: clock.Now, NoBackup: "the lab has no etcd",
	}}
	r := &pipeline.Runner{Stages: []pipeline.Stage{hop}, WorkDir: dir, Command: "upgrade run"}
	ctx, kill := context.WithCancel(context.Background())
	go func() { // the kill: w1 journaled on the new config, w2 not yet (the pool takes one at a time)
		for ctx.Err() == nil {
			if j, _ := os.ReadFile(pipeline.JournalPath(dir)); bytes.Contains(j, []byte(`"step":"4.18.5/`+upgrade.StepNodes+`/w1"`)) {
				kill()
				return
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	if err := r.Run(ctx, pipeline.RunOptions{}); err == nil {
		t.Fatal("the first run was not stopped")
	}
	kill()
	first, err := readUpgrade(work)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string][]upgrade.Transition{} // what the killed run journaled, per node
	for _, s := range first.Hops[0].Steps {
		if s.Step == upgrade.StepWorkers {
			t.Fatal("the kill came after the workers step: nothing to resume mid-workers")
		}
		if n, ok := strings.CutPrefix(s.Step, upgrade.StepNodes+"/"); ok {
			var rec struct{ Transitions []upgrade.Transition }
			if err := json.Unmarshal(s.Data, &rec); err != nil {
				t.Fatal(err)
			}
			seen[n] = rec.Transitions
		}
	}
	if len(seen["w1"]) == 0 || len(seen["m0"]) == 0 {
		t.Fatalf("the killed run journaled %v, want m0 and w1 at least", seen)
	}
	if err := r.Run(context.Background(), pipeline.RunOptions{}); err != nil {
		t.Fatalf("resume: %v", err)
	}
	u, err := readUpgrade(work)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	upgradeMarkdown(&b, u)
	md := b.String()
	var closeRow string
	for _, line := range strings.Split(md, "\n") {
		if strings.Contains(line, "| "+upgrade.StepClose+" |") {
			closeRow = line
		}
	}
	for n, pool := range map[string]string{"m0": "master", "w0": "worker", "w1": "worker", "w2": "worker"} {
		if !strings.Contains(closeRow, n+" ") || !strings.Contains(closeRow, upgradetest.Rendered(pool, "4.18.5")+" at ") {
			t.Errorf("the close row lacks %s's transition to %s: %s", n, upgradetest.Rendered(pool, "4.18.5"), closeRow)
		}
	}
	for n, ts := range seen {
		for _, tr := range ts {
			at := tr.Config + " at " + tr.At.Format(time.RFC3339)
			if !strings.Contains(closeRow, at) {
				t.Errorf("%s: the killed run saw %s; the report's close row says %s", n, at, closeRow)
			}
			if !strings.Contains(md, "node "+n+" Done on ") {
				t.Errorf("the report has no row for %s's journaled transitions", n)
			}
		}
	}
	t.Logf("close: %s", closeRow)
}
