package upgrade

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/bootstrap-dev/bootstrap/internal/cluster"
)

// StepSubscriptions moves the hop's Subscriptions to the next minor's CatalogSources: after the
// mirror-config step applied them and after the updates the plan puts before the hop (which come
// from the minor being left) are installed.
const StepSubscriptions = "subscriptions"

// Trip kinds of the subscriptions step.
const (
	TripSubscriptionMissing = "subscription-missing"
	TripSubscriptionSource  = "subscription-source-changed"
	TripCatalogNotReady     = "catalog-source-not-ready"
)

// catalogReady is OLM's word for a CatalogSource whose registry answers (status.connectionState
// .lastObservedState, the gRPC connectivity state the catalog operator records).
const catalogReady = "READY"

// SubscriptionMoves is what the subscriptions step did: the Subscriptions it patched and those it
// found already on their target (moved by a run killed before its record, or by a person): not
// patched twice.
type SubscriptionMoves struct {
	Moved []string `json:"moved,omitempty"`        // namespace/name: from -> to
	Found []string `json:"alreadyMoved,omitempty"` // namespace/name: to
}

var (
	subscriptionKind  = cluster.Ref{APIVersion: "operators.coreos.com/v1alpha1", Kind: "Subscription"}
	catalogSourceKind = cluster.Ref{APIVersion: "operators.coreos.com/v1alpha1", Kind: "CatalogSource"}
)

// subscriptions reads every Subscription the hop moves and its target CatalogSource before it
// patches any: a Subscription missing, on a source the plan does not name, or a target missing
// or not READY within CatalogReadyWait stops the run with nothing patched. One already on its target is recorded, not
// written.
func (r *runner) subscriptions(ctx context.Context) (any, error) {
	res := &SubscriptionMoves{}
	type patch struct {
		m  SubscriptionMove
		ns string
	}
	var todo []patch
	for _, m := range r.o.Hop.Subscriptions {
		obj := "Subscription " + m.Subject()
		ref := subscriptionKind
		ref.Namespace, ref.Name = m.Namespace, m.Name
		sub, err := r.c.Get(ctx, ref)
		if apierrors.IsNotFound(err) {
			return nil, &Trip{Kind: TripSubscriptionMissing, Object: obj,
				Cause: fmt.Sprintf("not in the cluster, but the plan moves it from CatalogSource %s to %s", m.From, m.To),
				Fix:   "if the operator was removed on purpose, plan again (bootstrap upgrade plan) so the plan no longer names it; else restore the Subscription, then run again"}
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", obj, err)
		}
		src, _, _ := unstructured.NestedString(sub.Object, "spec", "source")
		srcNS, _, _ := unstructured.NestedString(sub.Object, "spec", "sourceNamespace")
		ns := r.targetNamespace(m)
		if src == m.To && srcNS == ns {
			res.Found = append(res.Found, m.Subject()+": "+m.To)
			continue
		}
		if src != m.From && src != m.To {
			return nil, &Trip{Kind: TripSubscriptionSource, Object: obj,
				Cause: fmt.Sprintf("spec.source is %s, neither the CatalogSource the plan moves it from (%s) nor the one it moves it to (%s)", src, m.From, m.To),
				Fix:   "someone changed its source since the plan: check which catalog it should follow, then plan again (bootstrap upgrade plan) and run the new plan"}
		}
		cs := catalogSourceKind
		cs.Namespace, cs.Name = ns, m.To
		csObj := "CatalogSource " + ns + "/" + m.To
		state, found, err := r.awaitCatalog(ctx, cs)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", csObj, err)
		}
		if !found {
			return nil, &Trip{Kind: TripCatalogNotReady, Object: csObj,
				Cause: fmt.Sprintf("not in the cluster, so Subscription %s cannot move to it from %s", m.Subject(), m.From),
				Fix:   "give the mirror's outputs for the hop's catalogs with --mirror-config DIR (its cs-*.yaml), or apply that CatalogSource, then run again"}
		}
		if state != catalogReady {
			if state == "" {
				state = "not reported"
			}
			return nil, &Trip{Kind: TripCatalogNotReady, Object: csObj,
				Cause: fmt.Sprintf("not READY after %s (status.connectionState.lastObservedState %s), so Subscription %s cannot move to it from %s", CatalogReadyWait, state, m.Subject(), m.From),
				Fix:   "check that its image is in the mirror registry and its registry pod in " + ns + " runs (oc -n " + ns + " get pods), then run again"}
		}
		todo = append(todo, patch{m, ns})
	}
	for _, p := range todo {
		spec := map[string]any{"source": p.m.To, "sourceNamespace": p.ns}
		body, _ := json.Marshal(map[string]any{"spec": spec})
		ref := subscriptionKind
		ref.Namespace, ref.Name = p.m.Namespace, p.m.Name
		if _, err := r.c.Patch(ctx, ref, body); err != nil {
			return nil, fmt.Errorf("move Subscription %s to CatalogSource %s: %w", p.m.Subject(), p.m.To, err)
		}
		res.Moved = append(res.Moved, p.m.Subject()+": "+p.m.From+" -> "+p.m.To)
	}
	return res, nil
}

// CatalogReadyWait is how long (on the run's clock) the subscriptions step waits for a target
// CatalogSource to turn READY: the mirror-config step has just applied it, and OLM's catalog
// operator needs its registry pod pulled and serving first.
const CatalogReadyWait = 10 * time.Minute

// awaitCatalog reads the CatalogSource until it is READY or CatalogReadyWait has passed, and
// returns its last state; found is false (at once) when it is not in the cluster.
func (r *runner) awaitCatalog(ctx context.Context, ref cluster.Ref) (state string, found bool, err error) {
	start := r.o.Now()
	for said := false; ; said = true {
		u, err := r.c.Get(ctx, ref)
		if apierrors.IsNotFound(err) {
			return "", false, nil
		}
		if err != nil {
			return "", true, err
		}
		state, _, _ = unstructured.NestedString(u.Object, "status", "connectionState", "lastObservedState")
		if state == catalogReady || r.o.Now().Sub(start) >= CatalogReadyWait {
			return state, true, nil
		}
		if !said {
			r.say("%s: waiting up to %s for CatalogSource %s/%s to be READY", r.o.Hop.To, CatalogReadyWait, ref.Namespace, ref.Name)
		}
		select {
		case <-ctx.Done():
			return state, true, ctx.Err()
		case <-time.After(r.o.Poll):
		}
	}
}

// targetNamespace is where the move's CatalogSource is: the namespace the hop's mirror config
// applies it in, else the one the plan names.
func (r *runner) targetNamespace(m SubscriptionMove) string {
	for _, u := range r.o.Mirror {
		if u.GetKind() == "CatalogSource" && u.GetName() == m.To && u.GetNamespace() != "" {
			return u.GetNamespace()
		}
	}
	if m.SourceNamespace != "" {
		return m.SourceNamespace
	}
	return MarketplaceNamespace
}
