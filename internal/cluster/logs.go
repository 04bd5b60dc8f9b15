package cluster

import (
	"context"
	"fmt"
	"strconv"
)

// PodLog reads the last tail lines of a container's log (GET .../pods/NAME/log), as
// `oc logs --tail` does.
func (c *Client) PodLog(ctx context.Context, namespace, pod, container string, tail int64) ([]byte, error) {
	b, err := c.raw.Get().AbsPath("/api/v1/namespaces", namespace, "pods", pod, "log").
		Param("container", container).Param("tailLines", strconv.FormatInt(tail, 10)).DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("log of pod %s/%s container %s: %w", namespace, pod, container, err)
	}
	return b, nil
}
