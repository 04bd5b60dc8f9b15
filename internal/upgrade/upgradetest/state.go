package upgradetest

import (
	"fmt"
	"strings"
)

// StateOptions shape a captured cluster state.
type StateOptions struct {
	Version string
	Channel string
	// Partial adds a newer, unfinished history entry (an update under way).
	Partial string
	// GPU installs the GPU Operator at this CSV version ("" for none), Network the NVIDIA Network
	// Operator.
	GPU, Network string
	// Legacy installs legacy-op.v1.0.0, whose CSV declares olm.maxOpenShiftVersion 4.17.
	Legacy bool
	// Gates are admin-gates keys of the running release; Acked those acknowledged.
	Gates, Acked []string
	// NotUpgradeable sets ClusterVersion's Upgradeable=False with this reason; Unmanaged sets
	// an unmanaged override.
	NotUpgradeable string
	Unmanaged      bool
}

// State renders a Kubernetes List as `oc get ... -o yaml` prints it.
func State(o StateOptions) []byte {
	var b strings.Builder
	ch := o.Channel
	if ch == "" {
		ch = "stable-" + o.Version[:strings.LastIndex(o.Version, ".")]
	}
	overrides, conds := "[]", "[{type: Available, status: \"True\"}]"
	if o.Unmanaged {
		overrides = "[{kind: Deployment, group: apps, namespace: openshift-monitoring, name: cluster-monitoring-operator, unmanaged: true}]"
	}
	if o.NotUpgradeable != "" {
		conds = fmt.Sprintf("[{type: Upgradeable, status: \"False\", reason: %s, message: \"Cluster should not be upgraded between minor versions\"}]", o.NotUpgradeable)
	}
	b.WriteString("apiVersion: v1\nkind: List\nitems:\n")
	fmt.Fprintf(&b, `- apiVersion: config.openshift.io/v1
  kind: ClusterVersion
  metadata: {name: version}
  spec:
    channel: %s
    clusterID: 0b5c3a0e-0000-4000-8000-000000000001
    overrides: %s
  status:
    conditions: %s
    desired: {version: %s, image: "%s"}
    history:
`, ch, overrides, conds, o.Version, Payload(o.Version))
	if o.Partial != "" {
		fmt.Fprintf(&b, "    - {state: Partial, version: %s, image: \"%s\"}\n", o.Partial, Payload(o.Partial))
	}
	fmt.Fprintf(&b, "    - {state: Completed, version: %s, image: \"%s\"}\n", o.Version, Payload(o.Version))
	b.WriteString("    - {state: Completed, version: 4.16.20, image: \"" + Payload("4.16.20") + "\"}\n")
	for _, n := range []struct{ name, role string }{{"master-0", "master"}, {"master-1", "master"}, {"master-2", "master"}, {"gpu-0", "worker"}} {
		fmt.Fprintf(&b, `- apiVersion: v1
  kind: Node
  metadata:
    name: %s
    labels: {kubernetes.io/arch: amd64, node-role.kubernetes.io/%s: ""}
  status:
    nodeInfo: {architecture: amd64, osImage: "Red Hat Enterprise Linux CoreOS"}
`, n.name, n.role)
	}
	for _, p := range []string{"master", "worker"} {
		fmt.Fprintf(&b, "- apiVersion: machineconfiguration.openshift.io/v1\n  kind: MachineConfigPool\n  metadata: {name: %s}\n  spec: {paused: false}\n", p)
	}
	op := func(ns, pkg, csv, version, channel, source, max string) {
		ann := ""
		if max != "" {
			ann = fmt.Sprintf("\n    annotations:\n      operatorframework.io/properties: '{\"properties\":[{\"type\":\"olm.maxOpenShiftVersion\",\"value\":\"%s\"}]}'", max)
		}
		fmt.Fprintf(&b, `- apiVersion: operators.coreos.com/v1alpha1
  kind: ClusterServiceVersion
  metadata:
    name: %s
    namespace: %s%s
  spec: {version: %s}
  status: {phase: Succeeded}
- apiVersion: operators.coreos.com/v1alpha1
  kind: Subscription
  metadata: {name: %s, namespace: %s}
  spec: {name: %s, channel: %s, source: %s, sourceNamespace: openshift-marketplace}
  status: {installedCSV: %s}
`, csv, ns, ann, version, pkg, ns, pkg, channel, source, csv)
	}
	if o.GPU != "" {
		op("nvidia-gpu-operator", "gpu-operator-certified", "gpu-operator-certified.v"+o.GPU, o.GPU, "v"+o.GPU[:strings.LastIndex(o.GPU, ".")], "certified-operators", "")
	}
	if o.Network != "" {
		op("nvidia-network-operator", "nvidia-network-operator", "nvidia-network-operator.v"+o.Network, o.Network, "stable", "certified-operators", "")
	}
	if o.Legacy {
		op("legacy", "legacy-op", "legacy-op.v1.0.0", "1.0.0", "stable", "redhat-operators", "4.17")
	}
	if len(o.Gates) > 0 {
		b.WriteString("- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: admin-gates, namespace: openshift-config-managed}\n  data:\n")
		for _, g := range o.Gates {
			fmt.Fprintf(&b, "    %s: \"Kubernetes 1.NN removes APIs; see the docs before you acknowledge.\"\n", g)
		}
	}
	b.WriteString("- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: admin-acks, namespace: openshift-config}\n  data:\n")
	for _, a := range o.Acked {
		fmt.Fprintf(&b, "    %s: \"true\"\n", a)
	}
	if len(o.Acked) == 0 {
		b.WriteString("    {}\n")
	}
	return []byte(b.String())
}
