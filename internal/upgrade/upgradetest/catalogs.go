package upgradetest

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/bootstrap-dev/bootstrap/internal/cluster/clustertest"
)

// catalogs plays OLM's catalog operator for Sim.Catalogs: a CatalogSource with no connection
// state yet gets status.connectionState.lastObservedState READY (its registry answers), as the
// catalog operator records once the registry pod serves. One with a state is left as it is, so a
// test can hold one at TRANSIENT_FAILURE.
func (s *Sim) catalogs(ctx context.Context) error {
	r := s.D.Resource(clustertest.CatalogSources)
	l, err := r.Namespace("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil // no CatalogSource CRD: nothing to play
	}
	for i := range l.Items {
		cs := &l.Items[i]
		if st, _, _ := unstructured.NestedString(cs.Object, "status", "connectionState", "lastObservedState"); st != "" {
			continue
		}
		_ = unstructured.SetNestedField(cs.Object, map[string]any{"lastObservedState": "READY",
			"address": cs.GetName() + "." + cs.GetNamespace() + ".svc:50051"}, "status", "connectionState")
		_, err := r.Namespace(cs.GetNamespace()).UpdateStatus(ctx, cs, metav1.UpdateOptions{})
		if err != nil && !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) { // changed or gone meanwhile: the next tick
			return err
		}
	}
	return nil
}
