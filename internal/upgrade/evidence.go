package upgrade

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/bootstrap-dev/bootstrap/internal/cluster"
)

// The labels the per-node evidence reads, as the NVIDIA GPU operator and Node Feature Discovery
// write them (gpu-operator internal/consts: NfdOSTreeVersionLabelKey, OcpDriverToolkitVersionLabel;
// on OpenShift the operator runs one driver DaemonSet per RHCOS build, its pods labelled with it).
const (
	LabelGPUPresent     = "nvidia.com/gpu.present"
	LabelOSBuild        = "feature.node.kubernetes.io/system-os_release.OSTREE_VERSION"
	LabelDriverBuild    = "openshift.driver-toolkit.rhcos"
	DefaultGPUNamespace = "nvidia-gpu-operator"
)

// TripEvidence is a canary that finished its update without the evidence of a good node.
const TripEvidence = "canary-evidence"

// NodeEvidence shows a node took the hop: its config, its new OS build, the GPU driver built for
// that OS ready on it, and the module blacklist still in force.
type NodeEvidence struct {
	Node          string    `json:"node"`
	Config        string    `json:"config"` // currentConfig == desiredConfig, state Done
	OSImageBefore string    `json:"osImageBefore,omitempty"`
	OSImage       string    `json:"osImage"`
	OSBuild       string    `json:"osBuild,omitempty"`
	DriverPod     string    `json:"driverPod,omitempty"` // namespace/name, on a GPU node
	Blacklist     []string  `json:"blacklist,omitempty"` // module: rendered config, loaded or not
	At            time.Time `json:"at"`
}

// evidence waits for the canary's OS build to change and, on a GPU node, for the driver pod of
// that build to be Ready (a trip after Thresholds.GPUDriver), then checks the blacklist.
func (r *runner) evidence(ctx context.Context, node, cfg, before string) (*NodeEvidence, error) {
	ev := &NodeEvidence{Node: node, Config: cfg, OSImageBefore: before}
	var since time.Time
	var late *Trip
	_, err := r.w.until(ctx, "the canary's evidence", func(v *View) (bool, string) {
		var n *NodeView
		for i := range v.Nodes {
			if v.Nodes[i].Name == node {
				n = &v.Nodes[i]
			}
		}
		if n == nil {
			return false, "node " + node + " not found"
		}
		ev.OSImage, ev.OSBuild = n.OSImage, n.Labels[LabelOSBuild]
		if before != "" && n.OSImage == before {
			return false, fmt.Sprintf("node %s still reports OS %q", node, n.OSImage)
		}
		if n.Labels[LabelGPUPresent] != "true" {
			return true, ""
		}
		if since.IsZero() {
			since = v.At
		}
		pod, msg := r.driverPod(ctx, node, ev.OSBuild)
		if pod != "" {
			ev.DriverPod = pod
			return true, ""
		}
		if v.At.Sub(since) >= r.o.Thresholds.GPUDriver {
			late = &Trip{Kind: TripEvidence, Object: "Node/" + node,
				Cause: fmt.Sprintf("updated to %s but no GPU driver pod for OS build %q is ready after %s (%s)", cfg, ev.OSBuild, round(v.At.Sub(since)), msg),
				Fix:   "read the driver pod's log (oc logs -n " + r.gpuNS() + " -c nvidia-driver-ctr <pod on " + node + ">): the driver must build for the new kernel; the other pools stay paused"}
			return true, ""
		}
		return false, msg
	})
	if err != nil {
		return nil, err
	}
	if late != nil {
		return nil, late
	}
	if len(r.o.Blacklist) > 0 {
		nm, err := r.c.VerifyBlacklists(ctx, []cluster.Blacklist{{Modules: r.o.Blacklist, Pools: []string{r.o.CanaryPool}}}, r.o.Prober, nil)
		var be *cluster.BlacklistError
		if errors.As(err, &be) {
			return nil, &Trip{Kind: TripEvidence, Object: "Node/" + node,
				Cause: "the module blacklist is no longer in force after the update: " + strings.Join(be.Problems, "; "),
				Fix:   "restore the day-1 blacklist MachineConfig (bootstrap replay configure re-applies it), let the canary pool roll, then resume"}
		}
		if err != nil {
			return nil, err
		}
		for _, m := range nm {
			s := fmt.Sprintf("%s: blacklisted in %s", m.Module, m.Config)
			if m.Loaded != nil {
				s += fmt.Sprintf(", loaded %t (lsmod on the node)", *m.Loaded)
			}
			ev.Blacklist = append(ev.Blacklist, s)
		}
	}
	ev.At = r.o.Now().UTC()
	return ev, nil
}

func (r *runner) gpuNS() string {
	if r.o.GPUNamespace != "" {
		return r.o.GPUNamespace
	}
	return DefaultGPUNamespace
}

// driverPod finds a Ready driver pod for build on node: namespace/name, or "" and what is missing.
func (r *runner) driverPod(ctx context.Context, node, build string) (string, string) {
	if build == "" {
		return "", "the node has no " + LabelOSBuild + " label yet"
	}
	pods, err := r.c.List(ctx, "v1", "Pod", r.gpuNS(), LabelDriverBuild+"="+build)
	if err != nil {
		return "", err.Error()
	}
	for _, p := range pods {
		if on, _, _ := unstructured.NestedString(p.Object, "spec", "nodeName"); on != node {
			continue
		}
		conds, _, _ := unstructured.NestedSlice(p.Object, "status", "conditions")
		for _, c := range conds {
			if m, _ := c.(map[string]any); m["type"] == "Ready" && m["status"] == "True" {
				return p.GetNamespace() + "/" + p.GetName(), ""
			}
		}
		return "", "driver pod " + p.GetName() + " not Ready"
	}
	return "", "no driver pod for build " + build + " on the node"
}
