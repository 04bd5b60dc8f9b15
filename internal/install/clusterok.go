package install

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/bootstrap-dev/bootstrap/internal/cluster"
	"github.com/bootstrap-dev/bootstrap/internal/poll"
)

// ClusterState is what the Kubernetes API says once the installer is done.
type ClusterState struct {
	Version   string   `json:"version"`
	Operators int      `json:"operators"`
	Nodes     []string `json:"nodes"`
}

// DegradedError lists the ClusterOperators that are Degraded or not Available.
type DegradedError struct{ Operators []string }

func (e *DegradedError) Error() string {
	return "cluster operators not healthy: " + strings.Join(e.Operators, "; ")
}

// CheckCluster waits (up to timeout) for ClusterVersion "version" to be Available, every
// ClusterOperator to be Available and not Degraded, and each named node to be Ready.
func CheckCluster(ctx context.Context, c *cluster.Client, nodes []string, timeout time.Duration, progress cluster.Progress) (ClusterState, error) {
	var st ClusterState
	cv := cluster.Ref{APIVersion: cluster.ConfigV1, Kind: "ClusterVersion", Name: "version"}
	if err := c.Wait(ctx, cv, "Available", timeout, cluster.ClusterVersionAvailable, progress); err != nil {
		return st, err
	}
	if u, err := c.Get(ctx, cv); err == nil {
		st.Version, _, _ = unstructured.NestedString(u.Object, "status", "desired", "version")
	}
	deadline := time.Now().Add(timeout)
	var bad []string
	every := poll.Every{Interval: max(50*time.Millisecond, min(10*time.Second, timeout/10)), Timeout: timeout}
	err := poll.Until(ctx, every, func(ctx context.Context) (bool, error) {
		cos, err := c.List(ctx, cluster.ConfigV1, "ClusterOperator", "", "")
		if err != nil {
			return false, err
		}
		bad = bad[:0]
		for i := range cos {
			co := &cos[i]
			if s, reason, msg, _ := cluster.Condition(co, "Degraded"); s == "True" {
				bad = append(bad, fmt.Sprintf("%s Degraded (%s): %s", co.GetName(), reason, msg))
			} else if s, reason, msg, _ := cluster.Condition(co, "Available"); s != "True" {
				bad = append(bad, fmt.Sprintf("%s not Available (%s): %s", co.GetName(), reason, msg))
			}
		}
		st.Operators = len(cos)
		if len(bad) > 0 && progress != nil {
			progress(fmt.Sprintf("%d of %d cluster operators not healthy, first: %s", len(bad), len(cos), bad[0]))
		}
		return len(bad) == 0, nil
	})
	if errors.Is(err, poll.ErrTimeout) {
		return st, &DegradedError{Operators: bad}
	}
	if err != nil {
		return st, err
	}
	for _, n := range nodes {
		ref := cluster.Ref{APIVersion: "v1", Kind: "Node", Name: n}
		if err := c.Wait(ctx, ref, "Ready", time.Until(deadline)+time.Second, cluster.NodeReady, progress); err != nil {
			return st, err
		}
		st.Nodes = append(st.Nodes, n)
	}
	return st, nil
}
