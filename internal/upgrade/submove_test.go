package upgrade_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"

	"github.com/bootstrap-dev/bootstrap/internal/cluster"
	"github.com/bootstrap-dev/bootstrap/internal/cluster/clustertest"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade/upgradetest"
)

const (
	oldCatalog = "cs-redhat-operator-index-v4-17"
	newCatalog = "cs-redhat-operator-index-v4-18"
	subsPath   = "/apis/operators.coreos.com/v1alpha1/namespaces/" + upgradetest.WorkloadNamespace + "/subscriptions/"
)

// subLab is the lab with Subscriptions on source and the next minor's CatalogSources in the
// states given ("" for none), and a client whose every request passes the tap.
type subLab struct {
	*lab
	tap *upgradetest.Tap
	c   *cluster.Client
}

func newSubLab(t *testing.T, subs map[string]string, catalogs map[string]string) *subLab {
	t.Helper()
	l := newLab(t, upgradetest.LabOptions{Version: "4.17.10", Workers: []string{"w0", "w1"}}, upgradetest.Faults{})
	ctx := context.Background()
	sr := l.d.Resource(clustertest.Subscriptions).Namespace(upgradetest.WorkloadNamespace)
	cr := l.d.Resource(clustertest.CatalogSources).Namespace(upgradetest.WorkloadNamespace)
	tidy := func() {
		for _, n := range []string{"legacy-op", "other-op"} {
			_ = sr.Delete(ctx, n, metav1.DeleteOptions{})
		}
		for _, n := range []string{newCatalog, "cs-certified-operator-index-v4-18"} {
			_ = cr.Delete(ctx, n, metav1.DeleteOptions{})
		}
	}
	tidy()
	t.Cleanup(tidy)
	for name, source := range subs {
		clustertest.Create(t, l.d, clustertest.Subscriptions, map[string]any{"apiVersion": "operators.coreos.com/v1alpha1", "kind": "Subscription",
			"metadata": map[string]any{"name": name, "namespace": upgradetest.WorkloadNamespace},
			"spec": map[string]any{"name": name, "channel": "stable", "source": source, "sourceNamespace": upgradetest.WorkloadNamespace,
				"installPlanApproval": "Manual"}})
	}
	for name, state := range catalogs {
		clustertest.Create(t, l.d, clustertest.CatalogSources, map[string]any{"apiVersion": "operators.coreos.com/v1alpha1", "kind": "CatalogSource",
			"metadata": map[string]any{"name": name, "namespace": upgradetest.WorkloadNamespace},
			"spec":     map[string]any{"sourceType": "grpc", "image": "registry.site.example:8443/redhat/" + name + ":v4.18"}})
		if state != "" {
			clustertest.MustSetStatus(t, l.d, clustertest.CatalogSources, upgradetest.WorkloadNamespace, name,
				map[string]any{"connectionState": map[string]any{"address": name + ":50051", "lastObservedState": state}}, true)
		}
	}
	tap := upgradetest.NewTap(t, server.Config(t))
	c, err := cluster.New(&rest.Config{Host: tap.URL})
	if err != nil {
		t.Fatal(err)
	}
	return &subLab{lab: l, tap: tap, c: c}
}

func move(name, from, to string) upgrade.SubscriptionMove {
	return upgrade.SubscriptionMove{Namespace: upgradetest.WorkloadNamespace, Name: name, From: from, To: to,
		SourceNamespace: upgradetest.WorkloadNamespace, Source: "test"}
}

// opts runs the hop with moves up to the subscriptions step (the run stops on errKilled after
// the work of the step that follows it, canary-pool, before that is journaled; the rest of the
// hop is other tests' business).
func (l *subLab) opts(t *testing.T, moves ...upgrade.SubscriptionMove) upgrade.RunOptions {
	o := l.lab.opts(t)
	o.Hop.Subscriptions = moves
	o.Crash = func(step string) error {
		if step == upgrade.StepCanary {
			return errKilled
		}
		return nil
	}
	return o
}

func (l *subLab) source(t *testing.T, name string) string {
	t.Helper()
	u, err := l.d.Resource(clustertest.Subscriptions).Namespace(upgradetest.WorkloadNamespace).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s, _, _ := unstructured.NestedString(u.Object, "spec", "source")
	return s
}

// A Subscription on the old minor's CatalogSource is moved once to the READY next one; a run
// killed after the patch and before its record resumes, reads the Subscription, finds it on its
// target and records it as already moved: one PATCH in all, counted at the tap.
func TestRunMovesSubscriptionOnceAcrossAKill(t *testing.T) {
	l := newSubLab(t, map[string]string{"legacy-op": oldCatalog}, map[string]string{newCatalog: "READY"})
	j := &upgradetest.Journal{}
	o := l.opts(t, move("legacy-op", oldCatalog, newCatalog))
	crash := o.Crash
	o.Crash = func(step string) error {
		if step == upgrade.StepSubscriptions {
			return errKilled
		}
		return crash(step)
	}
	if _, err := upgrade.Run(context.Background(), l.c, j, o); !errors.Is(err, errKilled) {
		t.Fatalf("first run: %v, want the kill after %s", err, upgrade.StepSubscriptions)
	}
	if got := l.source(t, "legacy-op"); got != newCatalog {
		t.Fatalf("after the first run spec.source is %s, want %s", got, newCatalog)
	}
	if _, err := upgrade.Run(context.Background(), l.c, j, l.opts(t, move("legacy-op", oldCatalog, newCatalog))); !errors.Is(err, errKilled) {
		t.Fatalf("resumed run: %v", err)
	}
	if n := l.tap.Count("PATCH " + subsPath + "legacy-op"); n != 1 {
		t.Errorf("Subscription patched %d times across the kill, want 1", n)
	}
	var rec upgrade.SubscriptionMoves
	if !j.Done("4.18.5/"+upgrade.StepSubscriptions, &rec) || len(rec.Moved) != 0 || len(rec.Found) != 1 || rec.Found[0] != "workload/legacy-op: "+newCatalog {
		t.Errorf("journaled %+v, want legacy-op found already moved by the killed run", rec)
	}
	if i, k := indexOf(j.Keys, "4.18.5/"+upgrade.StepInstallPlans), indexOf(j.Keys, "4.18.5/"+upgrade.StepSubscriptions); i < 0 || k != i+1 || indexOf(j.Keys, "4.18.5/"+upgrade.StepMirror) >= i {
		t.Errorf("journal %v: subscriptions must follow mirror-config and the updates before the hop", j.Keys)
	}
}

// One uninterrupted run patches spec.source once and journals the move; a Subscription
// already on its target is recorded and not written.
func TestRunMovesSubscriptionsAndLeavesMovedOnes(t *testing.T) {
	l := newSubLab(t, map[string]string{"legacy-op": oldCatalog, "other-op": newCatalog}, map[string]string{newCatalog: "READY"})
	j := &upgradetest.Journal{}
	if _, err := upgrade.Run(context.Background(), l.c, j, l.opts(t, move("legacy-op", oldCatalog, newCatalog), move("other-op", oldCatalog, newCatalog))); !errors.Is(err, errKilled) {
		t.Fatal(err)
	}
	if got := l.source(t, "legacy-op"); got != newCatalog {
		t.Errorf("legacy-op spec.source %s, want %s", got, newCatalog)
	}
	if a, b := l.tap.Count("PATCH "+subsPath+"legacy-op"), l.tap.Count("PATCH "+subsPath+"other-op"); a != 1 || b != 0 {
		t.Errorf("PATCHes: legacy-op %d (want 1), other-op %d (want 0: already on its target)", a, b)
	}
	var rec upgrade.SubscriptionMoves
	j.Done("4.18.5/"+upgrade.StepSubscriptions, &rec)
	if strings.Join(rec.Moved, ",") != "workload/legacy-op: "+oldCatalog+" -> "+newCatalog || strings.Join(rec.Found, ",") != "workload/other-op: "+newCatalog {
		t.Errorf("journaled %+v", rec)
	}
}

// A target CatalogSource missing or not READY, or a Subscription missing, stops the run before
// the InstallPlans with one sentence naming the object, and no Subscription is patched (not even
// one whose own target is READY).
func TestRunSubscriptionsStop(t *testing.T) {
	for _, tc := range []struct {
		name     string
		catalogs map[string]string
		moves    []upgrade.SubscriptionMove
		kind     string
		sentence []string
	}{
		{"target missing", map[string]string{"cs-certified-operator-index-v4-18": "READY"},
			[]upgrade.SubscriptionMove{move("other-op", "cs-certified-operator-index-v4-17", "cs-certified-operator-index-v4-18"), move("legacy-op", oldCatalog, newCatalog)},
			upgrade.TripCatalogNotReady, []string{"CatalogSource workload/" + newCatalog + ": not in the cluster", "--mirror-config"}},
		{"target not ready", map[string]string{newCatalog: "TRANSIENT_FAILURE", "cs-certified-operator-index-v4-18": "READY"},
			[]upgrade.SubscriptionMove{move("other-op", "cs-certified-operator-index-v4-17", "cs-certified-operator-index-v4-18"), move("legacy-op", oldCatalog, newCatalog)},
			upgrade.TripCatalogNotReady, []string{"CatalogSource workload/" + newCatalog + ": not READY after 10m0s (status.connectionState.lastObservedState TRANSIENT_FAILURE)", "registry pod"}},
		{"target without status", map[string]string{newCatalog: ""},
			[]upgrade.SubscriptionMove{move("legacy-op", oldCatalog, newCatalog)},
			upgrade.TripCatalogNotReady, []string{"lastObservedState not reported"}},
		{"subscription missing", map[string]string{newCatalog: "READY"},
			[]upgrade.SubscriptionMove{move("gone-op", oldCatalog, newCatalog)},
			upgrade.TripSubscriptionMissing, []string{"Subscription workload/gone-op: not in the cluster", "plan again"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newSubLab(t, map[string]string{"legacy-op": oldCatalog, "other-op": "cs-certified-operator-index-v4-17"}, tc.catalogs)
			j := &upgradetest.Journal{}
			_, err := upgrade.Run(context.Background(), l.c, j, l.opts(t, tc.moves...))
			var trip *upgrade.Trip
			if !errors.As(err, &trip) || trip.Kind != tc.kind {
				t.Fatalf("run: %v, want a %s trip", err, tc.kind)
			}
			for _, s := range tc.sentence {
				if !strings.Contains(trip.Sentence(), s) {
					t.Errorf("sentence %q lacks %q", trip.Sentence(), s)
				}
			}
			for _, n := range []string{"legacy-op", "other-op"} {
				if c := l.tap.Count("PATCH " + subsPath + n); c != 0 {
					t.Errorf("%s patched %d times on a stopped step", n, c)
				}
			}
			if got := l.source(t, "legacy-op"); got != oldCatalog {
				t.Errorf("legacy-op moved to %s", got)
			}
			if j.Done("4.18.5/"+upgrade.StepSubscriptions, nil) || j.Done("4.18.5/"+upgrade.StepCanary, nil) {
				t.Errorf("journal went on after the stop: %v", j.Keys)
			}
		})
	}
}

func indexOf(ss []string, s string) int {
	for i, x := range ss {
		if x == s {
			return i
		}
	}
	return -1
}
