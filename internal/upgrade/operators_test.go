package upgrade_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/cluster/clustertest"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade/upgradetest"
)

const gpuNext = "gpu-operator-certified.v25.3.0"

// twoHops are 4.17.10 -> 4.18.5 -> 4.19.2 with the GPU Operator update to v25.3.0 after the
// first, as a plan puts an operator update the next minor needs.
func twoHops() []upgrade.Hop {
	return []upgrade.Hop{
		{From: "4.17.10", To: "4.18.5", Payload: upgradetest.Payload("4.18.5"),
			After: []upgrade.Step{{Subject: "gpu-operator-certified", Action: "update", CSV: gpuNext}}},
		{From: "4.18.5", To: "4.19.2", Payload: upgradetest.Payload("4.19.2")},
	}
}

// The operator update a plan puts after hop 1 is installed before hop 2 starts: the
// install-plans-after step approves OLM's InstallPlan and waits until the CSV is Succeeded and
// the Subscription at it, journals it, and only then does hop 2 run; when hop 2 sets
// spec.desiredUpdate the CSV is Succeeded. Without the wait, hop 1 would end with the update
// still Installing and hop 2's preflight would refuse (this test fails).
func TestRunWaitsForTheOperatorUpdateBetweenHops(t *testing.T) {
	l := newLab(t, upgradetest.LabOptions{Version: "4.17.10", Workers: []string{"w0", "w1"}}, upgradetest.Faults{})
	olm := labOLM(t, l)
	olm.Delay = 5 * time.Minute // unpacking and rolling out: 0.25 s on the lab's clock
	olm.Start(t)
	j := &upgradetest.Journal{}
	hops := twoHops()
	var atDesired []string
	for i := range hops {
		o := l.opts(t)
		o.Hop, o.Soak = hops[i], 0
		if i > 0 {
			o.Previous = &hops[i-1]
		}
		o.Crash = func(step string) error {
			if step == upgrade.StepDesired && i == 1 {
				csv := get(t, l.d, clustertest.ClusterServiceVersions, upgradetest.WorkloadNamespace, gpuNext)
				sub := get(t, l.d, clustertest.Subscriptions, upgradetest.WorkloadNamespace, "gpu-operator-certified")
				atDesired = []string{field(csv, "status", "phase"), field(sub, "status", "installedCSV")}
			}
			return nil
		}
		if res, err := upgrade.Run(context.Background(), l.c, j, o); err != nil || !res.Done {
			t.Fatalf("hop %s: %v (journal %v)", hops[i].To, err, j.Keys)
		}
	}
	if !slices.Equal(atDesired, []string{"Succeeded", gpuNext}) {
		t.Errorf("when hop 2 set desiredUpdate: CSV phase, Subscription installedCSV = %v, want Succeeded, %s", atDesired, gpuNext)
	}
	after, intent := slices.Index(j.Keys, "4.18.5/"+upgrade.StepAfterPlans), slices.Index(j.Keys, "4.19.2/"+upgrade.StepIntent)
	if after < 0 || intent < 0 || after > intent {
		t.Errorf("journal %v: hop 1's install-plans-after must come before hop 2's desiredUpdate", j.Keys)
	}
	var rec upgrade.OperatorUpdates
	j.Done("4.18.5/"+upgrade.StepAfterPlans, &rec)
	if len(rec.Installed) != 1 || rec.Installed[0].CSV != gpuNext || rec.Installed[0].Phase != "Succeeded" || rec.Installed[0].At.IsZero() ||
		rec.Installed[0].Subscription != upgradetest.WorkloadNamespace+"/gpu-operator-certified" || len(rec.Approved) != 1 {
		t.Errorf("journaled install-plans-after: %+v", rec)
	}
}

// A planned update the catalog does not carry: no InstallPlan names it, the run stops once
// Thresholds.OperatorInstall has passed, with one sentence (cause, object, remedy) journaled as
// the trip; hop 2 refuses to start, naming the CSV, and its desiredUpdate is never set.
func TestRunStopsWhenThePlannedOperatorUpdateIsMissing(t *testing.T) {
	l := newLab(t, upgradetest.LabOptions{Version: "4.17.10", Workers: []string{"w0", "w1"}}, upgradetest.Faults{})
	olm := labOLM(t, l)
	gpu := olm.Catalogs["certified-operators"]["gpu-operator-certified"]
	gpu["stable"] = gpu["stable"][:1] // the catalog lacks v25.3.0
	olm.Start(t)
	j := &upgradetest.Journal{}
	hops := twoHops()
	o := l.opts(t)
	o.Hop, o.Soak = hops[0], 0
	_, err := upgrade.Run(context.Background(), l.c, j, o)
	var trip *upgrade.Trip
	if !errors.As(err, &trip) || trip.Kind != upgrade.TripOperatorMissing {
		t.Fatalf("hop 1: %v, want the %s trip", err, upgrade.TripOperatorMissing)
	}
	want := "Subscription workload/gpu-operator-certified: the plan installs gpu-operator-certified.v25.3.0 after hop 4.18.5, but no InstallPlan names it after "
	if s := trip.Sentence(); !strings.HasPrefix(s, want) ||
		!strings.Contains(s, "the Subscription (catalog certified-operators, channel stable) is at gpu-operator-certified.v25.0.0 (state AtLatestKnown); check that the Subscription's catalog carries") {
		t.Errorf("sentence:\n %s\nwant it to start %q and name the catalog, channel and installed CSV", s, want)
	}
	var rec struct{ Sentence string }
	if !j.Done("4.18.5/"+upgrade.StepTrip, &rec) || rec.Sentence != trip.Sentence() || j.Done("4.18.5/"+upgrade.StepAfterPlans, nil) {
		t.Errorf("journal %v: want the trip journaled and install-plans-after not", j.Keys)
	}
	patched := l.cvPatch.Load()
	o = l.opts(t)
	o.Hop, o.Soak, o.Previous = hops[1], 0, &hops[0]
	res, err := upgrade.Run(context.Background(), l.c, j, o)
	var pe *upgrade.PreflightError
	if !errors.As(err, &pe) || res.Done {
		t.Fatalf("hop 2: %v, want its preflight to refuse", err)
	}
	found := false
	for _, f := range pe.Findings {
		found = found || (f.Result == upgrade.Fail && f.Object == "ClusterServiceVersion "+gpuNext && strings.Contains(f.Message, "after hop 4.18.5"))
	}
	if !found {
		t.Errorf("hop 2's preflight does not name %s: %v", gpuNext, pe)
	}
	if l.cvPatch.Load() != patched || field(l.get(t, "cv", ""), "spec", "desiredUpdate", "version") != "4.18.5" {
		t.Errorf("hop 2 set desiredUpdate (%d patches, was %d)", l.cvPatch.Load(), patched)
	}
	for _, k := range j.Keys {
		if strings.HasPrefix(k, "4.19.2/") && !strings.HasSuffix(k, "/"+upgrade.StepContract) {
			t.Errorf("hop 2 journaled %s", k)
		}
	}
	if p := l.get(t, "pool", "worker"); field(p, "metadata", "annotations", upgrade.AnnPausedBy) != "" {
		t.Errorf("a pool was left paused by us: %v", p.GetAnnotations())
	}
}

// An InstallPlan that fails (its bundle cannot be unpacked) stops the run at once at the
// install-plans step before the hop: nothing after it, desiredUpdate never set.
func TestRunStopsWhenTheInstallPlanFails(t *testing.T) {
	l := newLab(t, upgradetest.LabOptions{Version: "4.17.10", Workers: []string{"w0", "w1"}}, upgradetest.Faults{})
	olm := labOLM(t, l)
	olm.Fail = map[string]bool{gpuNext: true}
	olm.Start(t)
	j := &upgradetest.Journal{}
	o := l.opts(t)
	o.Hop.Before = []upgrade.Step{{Subject: "gpu-operator-certified", Action: "update", CSV: gpuNext}}
	_, err := upgrade.Run(context.Background(), l.c, j, o)
	var trip *upgrade.Trip
	if !errors.As(err, &trip) || trip.Kind != upgrade.TripOperatorFailed {
		t.Fatalf("%v, want the %s trip", err, upgrade.TripOperatorFailed)
	}
	if s := trip.Sentence(); !strings.HasPrefix(s, "InstallPlan workload/install-") ||
		!strings.Contains(s, "the plan installs "+gpuNext+" before hop 4.18.5, but its InstallPlan failed (error unpacking bundle") {
		t.Errorf("sentence: %s", s)
	}
	if l.cvPatch.Load() != 0 || j.Done("4.18.5/"+upgrade.StepInstallPlans, nil) || j.Done("4.18.5/"+upgrade.StepCanary, nil) {
		t.Errorf("after the trip: %d ClusterVersion patches, journal %v", l.cvPatch.Load(), j.Keys)
	}
}
