package cluster

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Delete removes one object; an object already gone is not an error (a resumed run deletes
// again what a killed one deleted). The change hook is told with Action Deleted.
func (c *Client) Delete(ctx context.Context, r Ref) error {
	ri, err := c.resource(ctx, r.APIVersion, r.Kind, r.Namespace)
	if err != nil {
		return err
	}
	err = ri.Delete(ctx, r.Name, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err == nil && c.changed != nil {
		c.changed(Applied{Ref: r, Action: Deleted})
	}
	return err
}

// Deleted: the object was deleted.
const Deleted Action = "deleted"
