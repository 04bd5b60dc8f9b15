// Package upgrade plans an OpenShift upgrade offline, from the update graph the mirror carries
// and a captured (or live-read) state of the cluster: which releases to go through, one minor per
// hop as the cluster-version operator allows, which conditional risks apply to this cluster and who
// accepted those that cannot be decided offline, what each hop needs from the installed operators
// (a bundle reachable in the next catalog, no olm.maxOpenShiftVersion below the next minor, the
// NVIDIA operators' declared OpenShift range and driver image), which admin-acks the hop needs,
// and the exact images to carry.
//
// What it reads, and the formats it follows:
//
//   - the Cincinnati graph JSON of a channel, as the update service serves it and the CVO parses
//     it (pkg/cincinnati): nodes {version, payload, metadata}, edges as [from, to] index pairs,
//     conditionalEdges {edges: [{from, to}], risks: [{url, name, message, matchingRules}]} where a
//     rule is {type: Always} or {type: PromQL, promql: {promql: "..."}} (graph.go);
//   - the graph-data layout of openshift/cincinnati-graph-data: a version file, channels/*.yaml
//     {name, versions} and blocked-edges/*.yaml {to, from (a regular expression), url, name,
//     message, matchingRules, fixedIn} (graphdata.go). A blocked edge without rules removes the
//     edge; one with rules makes it conditional, as the update service does;
//   - content.json's graph entries, when the carried directory has one: every graph file must be
//     listed and hash to its entry, so a truncated or altered carry is refused (carried.go);
//   - the cluster state: a Kubernetes List (what `oc get clusterversion,csv,sub,nodes,mcp,cm -A -o
//     yaml` prints) holding the ClusterVersion, CSVs, Subscriptions, nodes, MachineConfigPools and
//     the admin-gates/admin-acks ConfigMaps (state.go);
//   - file-based catalogs per target minor, read with operator-registry's declcfg, the model the
//     mirror's catalog code uses (gate.go);
//   - nvidia-matrix.yaml, embedded: the NVIDIA GPU and Network operators' OpenShift ranges, the
//     driver image's OS suffix per minor, and releases NVIDIA says not to use (nvidia.go).
//
// Plan (plan.go) is a pure function of those inputs: the same inputs give a byte-identical plan.
// It never prints and never touches a cluster; cmd/bootstrap renders it.
package upgrade
