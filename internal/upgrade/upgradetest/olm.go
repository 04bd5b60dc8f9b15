package upgradetest

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/blang/semver/v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/bootstrap-dev/bootstrap/internal/cluster/clustertest"
)

// Catalogs are the catalogs' content the simulated OLM resolves against: CatalogSource name ->
// package -> channel -> bundles (Bundle: the CSV name, its version, the CSV it replaces and its
// skipRange, as a file-based catalog's olm.channel entries and olm.bundle name them).
type Catalogs map[string]map[string]map[string][]Bundle

// OLM plays the Operator Lifecycle Manager (operators.coreos.com/v1alpha1) on the real
// kube-apiserver: for a Subscription whose catalog has, on the Subscription's channel, a bundle
// that updates its status.installedCSV (one that replaces it, or whose skipRange holds its
// version; the newest such, one step per InstallPlan), it creates one InstallPlan naming that
// CSV (spec.approval from spec.installPlanApproval, approved only when Automatic; status.phase
// RequiresApproval) and sets the Subscription's currentCSV, installPlanRef and state
// UpgradePending. An approved InstallPlan goes Installing, then Complete: the new
// ClusterServiceVersion is created with status.phase Succeeded, the one it replaces removed, the
// Subscription's installedCSV set and its state AtLatestKnown. An InstallPlan naming a CSV no
// Subscription of its namespace can find in its catalog, or one in Fail, goes Failed.
type OLM struct {
	D        dynamic.Interface
	Clock    *Clock
	Catalogs Catalogs
	// Fail names CSVs whose InstallPlan fails when approved (phase Failed, condition
	// Installed=False), as one whose bundle cannot be unpacked does.
	Fail map[string]bool
	// Delay is how long (on the Clock) an approved InstallPlan stays Installing, as the real one
	// does while the bundle is unpacked and the new CSV's deployments roll out (0: one reconcile).
	Delay time.Duration
	// Tick is the real time between reconciles (default 20 ms).
	Tick time.Duration

	mu      sync.Mutex
	began   map[string]time.Time // InstallPlan namespace/name -> when it went Installing
	seq     int
	cleaned map[string]bool
}

// Start runs the OLM until the test ends.
func (o *OLM) Start(t testing.TB) {
	t.Helper()
	if o.Tick == 0 {
		o.Tick = 20 * time.Millisecond
	}
	reconcileLoop(t, "OLM", o.Tick, o.reconcile)
}

// Operator installs an operator as OLM leaves it: its CSV Succeeded in ns and a Subscription
// (named after the package, installPlanApproval Manual) at it, AtLatestKnown. They are removed
// when the test ends, with the InstallPlans and CSVs OLM made in ns.
func (o *OLM) Operator(t testing.TB, ns, source, pkg, channel, csv string) {
	t.Helper()
	ctx := context.Background()
	_, err := o.D.Resource(clustertest.Namespaces).Create(ctx, obj("v1", "Namespace", "", ns), metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	clean := func() {
		for _, gvr := range []schema.GroupVersionResource{clustertest.Subscriptions, clustertest.InstallPlans, clustertest.ClusterServiceVersions} {
			_ = o.D.Resource(gvr).Namespace(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
		}
	}
	o.mu.Lock()
	first := !o.cleaned[ns]
	if o.cleaned == nil {
		o.cleaned = map[string]bool{}
	}
	o.cleaned[ns] = true
	o.mu.Unlock()
	if first {
		clean() // what an earlier test left
		t.Cleanup(clean)
	}
	version := ""
	if b, ok := o.bundle(source, pkg, channel, csv); ok {
		version = b.Version
	}
	if err := o.createCSV(ctx, ns, csv, version, ""); err != nil {
		t.Fatal(err)
	}
	clustertest.Create(t, o.D, clustertest.Subscriptions, map[string]any{"apiVersion": "operators.coreos.com/v1alpha1", "kind": "Subscription",
		"metadata": map[string]any{"name": pkg, "namespace": ns},
		"spec": map[string]any{"name": pkg, "channel": channel, "source": source, "sourceNamespace": "openshift-marketplace",
			"installPlanApproval": "Manual"}})
	clustertest.MustSetStatus(t, o.D, clustertest.Subscriptions, ns, pkg, map[string]any{"installedCSV": csv, "currentCSV": csv,
		"state": "AtLatestKnown", "lastUpdated": o.now()}, true)
}

func (o *OLM) now() string { return o.Clock.Now().UTC().Format(time.RFC3339) }

func (o *OLM) bundle(source, pkg, channel, name string) (Bundle, bool) {
	for _, b := range o.Catalogs[source][pkg][channel] {
		if b.Name == name {
			return b, true
		}
	}
	return Bundle{}, false
}

// next is the bundle a Subscription at installed (of version) updates to, as OLM resolves it on
// the channel: the newest bundle replacing installed or whose skipRange holds its version.
func next(bundles []Bundle, installed, version string) (Bundle, bool) {
	v, verr := semver.ParseTolerant(version)
	var best Bundle
	var bestV semver.Version
	found := false
	for _, b := range bundles {
		ok := b.Replaces == installed && installed != ""
		if !ok && b.SkipRange != "" && verr == nil {
			if r, err := semver.ParseRange(b.SkipRange); err == nil && r(v) {
				ok = true
			}
		}
		bv, err := semver.ParseTolerant(b.Version)
		if !ok || err != nil || b.Name == installed {
			continue
		}
		if !found || bv.GT(bestV) {
			best, bestV, found = b, bv, true
		}
	}
	return best, found
}

func (o *OLM) reconcile(ctx context.Context) error {
	if err := o.execute(ctx); err != nil {
		return fmt.Errorf("install plans: %w", err)
	}
	return o.resolve(ctx)
}

// resolve creates the InstallPlan of each Subscription with an update on its channel.
func (o *OLM) resolve(ctx context.Context) error {
	subs, err := o.D.Resource(clustertest.Subscriptions).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	ips, err := o.D.Resource(clustertest.InstallPlans).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for i := range subs.Items {
		s := &subs.Items[i]
		ns := s.GetNamespace()
		source, _, _ := unstructured.NestedString(s.Object, "spec", "source")
		pkg, _, _ := unstructured.NestedString(s.Object, "spec", "name")
		channel, _, _ := unstructured.NestedString(s.Object, "spec", "channel")
		approval, _, _ := unstructured.NestedString(s.Object, "spec", "installPlanApproval")
		installed, _, _ := unstructured.NestedString(s.Object, "status", "installedCSV")
		status, _, _ := unstructured.NestedMap(s.Object, "status")
		if installed == "" {
			continue // a first install (startingCSV) is not played
		}
		version := ""
		if csv, err := o.D.Resource(clustertest.ClusterServiceVersions).Namespace(ns).Get(ctx, installed, metav1.GetOptions{}); err == nil {
			version, _, _ = unstructured.NestedString(csv.Object, "spec", "version")
		}
		b, ok := next(o.Catalogs[source][pkg][channel], installed, version)
		if !ok {
			if status["state"] != "AtLatestKnown" || status["currentCSV"] != installed {
				status["state"], status["currentCSV"], status["lastUpdated"] = "AtLatestKnown", installed, o.now()
				if err := clustertest.SetStatus(o.D, clustertest.Subscriptions, ns, s.GetName(), status, true); err != nil {
					return err
				}
			}
			continue
		}
		if pending(ips.Items, ns, b.Name) {
			continue
		}
		if approval == "" {
			approval = "Automatic"
		}
		o.mu.Lock()
		o.seq++
		name := fmt.Sprintf("install-%05d", o.seq)
		o.mu.Unlock()
		ip := obj("operators.coreos.com/v1alpha1", "InstallPlan", ns, name)
		ip.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "operators.coreos.com/v1alpha1", Kind: "Subscription", Name: s.GetName(), UID: s.GetUID()}})
		ip.Object["spec"] = map[string]any{"approval": approval, "approved": approval == "Automatic",
			"clusterServiceVersionNames": []any{b.Name}, "generation": int64(1)}
		made, err := o.D.Resource(clustertest.InstallPlans).Namespace(ns).Create(ctx, ip, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		status["currentCSV"], status["state"], status["lastUpdated"] = b.Name, "UpgradePending", o.now()
		status["installPlanRef"] = map[string]any{"apiVersion": "operators.coreos.com/v1alpha1", "kind": "InstallPlan",
			"name": name, "namespace": ns, "uid": string(made.GetUID()), "resourceVersion": made.GetResourceVersion()}
		status["installplan"] = map[string]any{"apiVersion": "operators.coreos.com/v1alpha1", "kind": "InstallPlan", "name": name, "uuid": string(made.GetUID())}
		if err := clustertest.SetStatus(o.D, clustertest.Subscriptions, ns, s.GetName(), status, true); err != nil {
			return err
		}
		phase := "RequiresApproval" // after the Subscription's status: who sees the phase sees it UpgradePending
		if approval == "Automatic" {
			phase = "Installing"
		}
		if err := clustertest.SetStatus(o.D, clustertest.InstallPlans, ns, name, map[string]any{"phase": phase,
			"catalogSources": []any{source}, "bundleLookups": []any{}}, true); err != nil {
			return err
		}
	}
	return nil
}

// pending says whether an InstallPlan of ns names csv and has not finished.
func pending(ips []unstructured.Unstructured, ns, csv string) bool {
	for _, ip := range ips {
		phase, _, _ := unstructured.NestedString(ip.Object, "status", "phase")
		names, _, _ := unstructured.NestedStringSlice(ip.Object, "spec", "clusterServiceVersionNames")
		if ip.GetNamespace() == ns && phase != "Complete" && phase != "Failed" && contains(names, csv) {
			return true
		}
	}
	return false
}

// execute moves the approved InstallPlans on: RequiresApproval (or none yet) to Installing, and
// Installing to Complete (or Failed), one step per reconcile.
func (o *OLM) execute(ctx context.Context) error {
	ips, err := o.D.Resource(clustertest.InstallPlans).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	sort.Slice(ips.Items, func(i, j int) bool { return ips.Items[i].GetName() < ips.Items[j].GetName() })
	for i := range ips.Items {
		ip := &ips.Items[i]
		approved, _, _ := unstructured.NestedBool(ip.Object, "spec", "approved")
		status, _, _ := unstructured.NestedMap(ip.Object, "status")
		if status == nil {
			status = map[string]any{"catalogSources": []any{}}
		}
		phase, _ := status["phase"].(string)
		if !approved || phase == "Complete" || phase == "Failed" {
			continue
		}
		id := ip.GetNamespace() + "/" + ip.GetName()
		if phase != "Installing" {
			status["phase"] = "Installing"
			o.mu.Lock()
			if o.began == nil {
				o.began = map[string]time.Time{}
			}
			o.began[id] = o.Clock.Now()
			o.mu.Unlock()
		} else {
			o.mu.Lock()
			began, ok := o.began[id]
			o.mu.Unlock()
			if ok && o.Clock.Now().Sub(began) < o.Delay {
				continue
			}
			if err := o.install(ctx, ip, status); err != nil {
				return err
			}
		}
		if err := clustertest.SetStatus(o.D, clustertest.InstallPlans, ip.GetNamespace(), ip.GetName(), status, true); err != nil {
			return err
		}
	}
	return nil
}

// install carries an InstallPlan out: each CSV it names replaces its Subscription's installed one.
func (o *OLM) install(ctx context.Context, ip *unstructured.Unstructured, status map[string]any) error {
	ns := ip.GetNamespace()
	names, _, _ := unstructured.NestedStringSlice(ip.Object, "spec", "clusterServiceVersionNames")
	subs, err := o.D.Resource(clustertest.Subscriptions).Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	fail := func(msg string) error {
		status["phase"] = "Failed"
		status["message"] = msg
		status["conditions"] = []any{map[string]any{"type": "Installed", "status": "False", "reason": "InstallComponentFailed",
			"message": msg, "lastTransitionTime": o.now(), "lastUpdateTime": o.now()}}
		return nil
	}
	type step struct {
		sub *unstructured.Unstructured
		b   Bundle
	}
	var steps []step
	for _, n := range names {
		var found *step
		for i := range subs.Items {
			s := &subs.Items[i]
			source, _, _ := unstructured.NestedString(s.Object, "spec", "source")
			pkg, _, _ := unstructured.NestedString(s.Object, "spec", "name")
			channel, _, _ := unstructured.NestedString(s.Object, "spec", "channel")
			if b, ok := o.bundle(source, pkg, channel, n); ok {
				found = &step{s, b}
			}
		}
		if found == nil {
			return fail(fmt.Sprintf("bundle %s not found in the catalog of any Subscription in %s", n, ns))
		}
		if o.Fail[n] {
			return fail(fmt.Sprintf("error unpacking bundle %s: bundle unpacking failed", n))
		}
		steps = append(steps, *found)
	}
	for _, st := range steps {
		old, _, _ := unstructured.NestedString(st.sub.Object, "status", "installedCSV")
		if err := o.createCSV(ctx, ns, st.b.Name, st.b.Version, st.b.Replaces); err != nil {
			return err
		}
		if old != "" && old != st.b.Name {
			if err := o.D.Resource(clustertest.ClusterServiceVersions).Namespace(ns).Delete(ctx, old, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				return err
			}
		}
		ss, _, _ := unstructured.NestedMap(st.sub.Object, "status")
		if ss == nil {
			ss = map[string]any{}
		}
		ss["installedCSV"], ss["currentCSV"], ss["state"], ss["lastUpdated"] = st.b.Name, st.b.Name, "AtLatestKnown", o.now()
		if err := clustertest.SetStatus(o.D, clustertest.Subscriptions, ns, st.sub.GetName(), ss, true); err != nil {
			return err
		}
	}
	status["phase"] = "Complete"
	status["conditions"] = []any{map[string]any{"type": "Installed", "status": "True", "lastTransitionTime": o.now(), "lastUpdateTime": o.now()}}
	return nil
}

// createCSV creates a ClusterServiceVersion with status.phase Succeeded (an existing one is
// left as it is).
func (o *OLM) createCSV(ctx context.Context, ns, name, version, replaces string) error {
	csv := obj("operators.coreos.com/v1alpha1", "ClusterServiceVersion", ns, name)
	spec := map[string]any{"displayName": name, "install": map[string]any{"strategy": "deployment"}}
	if version != "" {
		spec["version"] = version
	}
	if replaces != "" {
		spec["replaces"] = replaces
	}
	csv.Object["spec"] = spec
	_, err := o.D.Resource(clustertest.ClusterServiceVersions).Namespace(ns).Create(ctx, csv, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	if err != nil {
		return err
	}
	return clustertest.SetStatus(o.D, clustertest.ClusterServiceVersions, ns, name, map[string]any{"phase": "Succeeded",
		"reason": "InstallSucceeded", "message": "install strategy completed with no errors",
		"lastTransitionTime": o.now(), "lastUpdateTime": o.now()}, true)
}
