package upgrade_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/bootstrap-dev/bootstrap/internal/cluster/clustertest"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade/upgradetest"
)

// Each fault stops the hop with one sentence naming the cause, the object and the remedy; no
// step is journaled after the trip and the worker pool stays paused, its nodes on the old config.
func TestRunStopsAndExplains(t *testing.T) {
	for _, tc := range []struct {
		name    string
		signed  bool // the simulated CVO requires the release's signature ConfigMap
		lab     upgradetest.LabOptions
		faults  upgradetest.Faults
		pdbOn   string
		noMC    bool // the blacklist MachineConfig is deleted before the hop
		kind    string
		object  string
		say     []string
		lastRec string
	}{
		{name: "degraded operator", faults: upgradetest.Faults{DegradedOperator: "ingress"},
			kind: upgrade.TripDegraded, object: "ClusterOperator/ingress", say: []string{"degraded for", "over the 40m0s threshold", "SyncFailed"},
			lastRec: upgrade.StepDesired},
		{name: "missing signature", signed: true,
			kind: upgrade.TripReleaseRejected, object: "ClusterVersion/version", say: []string{"ReleaseAccepted=False (RetrievePayload", "cannot be verified"},
			lastRec: upgrade.StepDesired},
		{name: "operator progressing too long", faults: upgradetest.Faults{StuckOperator: "ingress"},
			kind: upgrade.TripProgressing, object: "ClusterOperator/ingress", say: []string{"longer than expected (30m0s)", "1 of 2 replicas"},
			lastRec: upgrade.StepDesired},
		{name: "PDB blocks the canary's drain", pdbOn: "w0",
			kind: upgrade.TripDrainBlocked, object: "PodDisruptionBudget workload/db", say: []string{"allows 0 disruptions: node w0 cannot drain", "relax the budget"},
			lastRec: upgrade.StepControlPlane},
		{name: "degraded node", faults: upgradetest.Faults{DegradedNode: "w0"},
			kind: upgrade.TripPoolDegraded, object: "Node/w0", say: []string{"Degraded", "irdma-blacklist"},
			lastRec: upgrade.StepDesired}, // the unpaused canary pool rolls while the control plane does
		{name: "GPU driver not ready on the canary", lab: upgradetest.LabOptions{GPU: []string{"w0"}}, faults: upgradetest.Faults{DriverNode: "w0"},
			kind: upgrade.TripEvidence, object: "Node/w0", say: []string{"no GPU driver pod for OS build \"418.94.4185\"", "not Ready", "the other pools stay paused"},
			lastRec: upgrade.StepControlPlane},
		{name: "blacklist MachineConfig gone", noMC: true,
			kind: upgrade.TripEvidence, object: "Node/w0", say: []string{"rendered-worker-canary-4.18.5 does not blacklist irdma", "replay configure"},
			lastRec: upgrade.StepControlPlane},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.lab.Version = "4.17.10"
			l := newLabSigned(t, tc.lab, tc.faults, tc.signed)
			if tc.pdbOn != "" {
				upgradetest.BlockingPDB(t, l.d, "db", tc.pdbOn)
			}
			if tc.noMC {
				if err := l.d.Resource(clustertest.MachineConfigs).Delete(context.Background(), upgradetest.BlacklistMC, metav1.DeleteOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			j := &upgradetest.Journal{}
			start := time.Now()
			res, err := upgrade.Run(context.Background(), l.c, j, l.opts(t))
			var trip *upgrade.Trip
			if !errors.As(err, &trip) {
				t.Fatalf("want a trip, got %v (journal %v)", err, j.Keys)
			}
			t.Logf("tripped after %s real: %s", time.Since(start).Round(time.Millisecond), trip.Sentence())
			if trip.Kind != tc.kind || trip.Object != tc.object {
				t.Errorf("trip %s on %s, want %s on %s", trip.Kind, trip.Object, tc.kind, tc.object)
			}
			for _, s := range tc.say {
				if !strings.Contains(trip.Sentence(), s) {
					t.Errorf("sentence lacks %q: %s", s, trip.Sentence())
				}
			}
			if last := j.Keys[len(j.Keys)-1]; last != "4.18.5/"+upgrade.StepTrip {
				t.Errorf("last journaled record %s, want the trip", last)
			}
			var steps []string // the steps, the node transitions seen on the way left out
			for _, k := range j.Keys[:len(j.Keys)-1] {
				if !strings.Contains(k, "/"+upgrade.StepNodes+"/") {
					steps = append(steps, k)
				}
			}
			if last := steps[len(steps)-1]; last != "4.18.5/"+tc.lastRec {
				t.Errorf("last journaled step %s, want %s", last, tc.lastRec)
			}
			var rec struct{ Kind, Object string }
			if j.Done("4.18.5/"+upgrade.StepTrip, &rec); rec.Kind != tc.kind || rec.Object != tc.object {
				t.Errorf("journaled trip %+v", rec)
			}
			if strings.Join(res.Paused, ",") != "worker" {
				t.Errorf("result says paused %v, want [worker]", res.Paused)
			}
			n := len(j.Keys)
			time.Sleep(300 * time.Millisecond) // the simulators go on: nothing of ours moves
			if p, _, _ := unstructured.NestedBool(l.get(t, "pool", "worker").Object, "spec", "paused"); !p {
				t.Error("the worker pool was unpaused after the trip")
			}
			for _, w := range []string{"w1", "w2"} {
				if cur := l.current(t, w); cur != upgradetest.Rendered("worker", "4.17.10") {
					t.Errorf("%s moved to %s after the trip", w, cur)
				}
			}
			if len(j.Keys) != n {
				t.Errorf("journal grew after the trip: %v", j.Keys[n:])
			}
			g, err := upgrade.GatherTrip(context.Background(), l.c, t.TempDir(), trip)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(g.Files, " "); got != "clusteroperators.json clusterversion.json events.json machineconfigpools.json nodes.json poddisruptionbudgets.json trip.json" {
				t.Errorf("gathered %s", got)
			}
			if tj, _ := os.ReadFile(filepath.Join(g.Dir, "trip.json")); !strings.Contains(string(tj), tc.object) {
				t.Errorf("trip.json lacks the object: %s", tj)
			}
			if pd, _ := os.ReadFile(filepath.Join(g.Dir, "poddisruptionbudgets.json")); (tc.pdbOn != "") != strings.Contains(string(pd), `"name": "db"`) {
				t.Errorf("the gathered PDBs: %s", pd)
			}
			if len(g.Missing) != 1 || !strings.Contains(g.Missing[0], "no pod k8s-app=machine-config-daemon") {
				t.Errorf("missing: %v (the lab runs no machine-config daemon pods)", g.Missing)
			}
		})
	}
}

// Upgradeable=False stops the hop in preflight: nothing is written to the cluster.
func TestRunRefusesWhenNotUpgradeable(t *testing.T) {
	l := newLab(t, upgradetest.LabOptions{Version: "4.17.10", NotUpgradeable: "IncompatibleOperatorsInstalled"}, upgradetest.Faults{})
	j := &upgradetest.Journal{}
	_, err := upgrade.Run(context.Background(), l.c, j, l.opts(t))
	var pe *upgrade.PreflightError
	if !errors.As(err, &pe) {
		t.Fatalf("want a preflight error, got %v", err)
	}
	if !strings.Contains(pe.Error(), "ClusterVersion/version: Upgradeable=False (IncompatibleOperatorsInstalled)") {
		t.Errorf("error does not name the condition and its object: %v", pe)
	}
	if strings.Join(j.Keys, " ") != "4.18.5/contract" {
		t.Errorf("journal after the refusal: %v, want the contract only", j.Keys)
	}
	if l.cvPatch.Load() != 0 {
		t.Error("ClusterVersion was written")
	}
	if d, _, _ := unstructured.NestedMap(l.get(t, "cv", "").Object, "spec", "desiredUpdate"); d != nil {
		t.Errorf("desiredUpdate set: %v", d)
	}
}

// Without an accepted rollback contract nothing happens at all.
func TestRunNeedsTheContract(t *testing.T) {
	j := &upgradetest.Journal{}
	o := upgrade.RunOptions{Hop: upgrade.Hop{From: "4.17.10", To: "4.18.5", Payload: upgradetest.Payload("4.18.5")}}
	if _, err := upgrade.Run(context.Background(), nil, j, o); !errors.Is(err, upgrade.ErrContract) || len(j.Keys) != 0 {
		t.Fatalf("err %v, journal %v", err, j.Keys)
	}
	o.Hop.Payload = "quay.io/openshift-release-dev/ocp-release:4.18.5-x86_64"
	o.AcceptedBy = "Jane Doe"
	if _, err := upgrade.Run(context.Background(), nil, j, o); err == nil || !strings.Contains(err.Error(), "by digest") {
		t.Fatalf("a tag was accepted: %v", err)
	}
}
