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
// No differential test against the cluster-version operator's precondition code, and why. The
// checks we mirror are in the CVO's pkg/payload/precondition/clusterversion: GiantHop (a target
// more than one minor beyond status.desired, or another major, is refused: our one minor per
// hop), Upgradeable (ClusterVersion Upgradeable=False blocks a minor update, not a z-stream:
// the gate blocks the first minor hop), with rollback, recommendedupdate and etcdbackup beside
// them. Linking them the way the installercheck module links the installer's validation would
// mean a separate module on
// github.com/openshift/cluster-version-operator, which publishes no semver tags (pseudo-versions
// only) and whose preconditions read ClusterVersion through openshift/client-go listers: the
// module pulls openshift/api, openshift/client-go, library-go, k8s.io/{api, apimachinery,
// client-go, apiextensions-apiserver, kube-aggregator} and prometheus at the CVO's own pins, a
// cold build of the same order as installercheck's (424-650 s measured on two cores; the CVO's
// was not built here), to compare about 150 lines of condition and version arithmetic. We
// compare against the reading instead: TestEdgesTheCVODrops (graph.go's parsing as
// pkg/cincinnati does), TestPlanRefuses (two minors up gives two hops, never one) and the
// Upgradeable=False verdicts in gate_test.go; revisit when the CVO splits the preconditions
// into a module of their own.
//
// NVIDIA matrix entries marked confirmed: false (nvidia-matrix.yaml): driverImageOS for 4.20 and
// 4.21 (-rhel9.6 carried forward from NVIDIA's "4.19 and later" sentence, not read per minor),
// and every operator range and default driver (GPU Operator 24.6, 24.9, 25.3, 25.10; Network
// Operator 24.10, 25.1, 25.4, 25.7): they were entered in an air-gapped session without NVIDIA's
// platform-support pages at hand, so each verdict drawn from them says "entry not confirmed
// against its source page" until a reviewed commit checks the page and flips the flag.
//
// Plan (plan.go) is a pure function of those inputs: the same inputs give a byte-identical plan.
// It never prints and never touches a cluster; cmd/bootstrap renders it.
//
// Run (run.go) takes one hop of a plan, canary first, through journaled steps: the contract,
// the etcd backup (backup.go: the cluster's own script over the gather stage's host-key-pinned
// SSH, files copied to the jump host, hashed and checked against the node's sha256sum), the
// signature ConfigMaps, the hop's IDMS/ITMS and CatalogSources, the InstallPlans whose every CSV
// the plan names (installplan.go), the canary pool, the pause, spec.desiredUpdate (intent
// journaled before, the write after; on resume the ClusterVersion is read, so it is never set
// twice; these writing steps, with the unpause and the close, are in writes.go), then it watches (watch.go) against the product's thresholds (thresholds.go), takes the
// canary's evidence (evidence.go: OS build, GPU driver pod for that build, module blacklist) and
// stops with a *Trip; GatherTrip (gather.go) collects what explains one. The watcher journals
// each node transition as it sees one (transitions.go) and each trip (retry.go): a resumed run
// keeps the killed run's times, and knows a ReleaseAccepted=False it already stopped on, which
// the CVO keeps until its own retry, from a new one.
//
// One journal or the upgrade's own: the upgrade keeps its own, .bootstrap/upgrade/journal.jsonl,
// written by the same pipeline.Runner (same entry format, hash chain, head witness and lock), one
// stage per hop (hop-<version>). The reasons:
//
//   - lifetime: the day-1 journal describes one install and is finished; upgrades come months
//     apart, many times. Appending them would make every day-1 command (status, resume, replay)
//     fold years of hops, and a day-1 stage list that knows nothing of hops;
//   - the resume rule: day-1 stages are skipped by input fingerprint and Verify against the
//     site profile; a hop's inputs are a plan and a cluster state, and "done" is read from the
//     ClusterVersion. Mixing both in one stage list would stale day-1 stages on a new plan;
//   - the lock: a day-1 `bootstrap report` or `status` must stay possible while a hop runs for
//     hours; they read the day-1 journal without taking the upgrade's lock;
//   - the evidence stays one chain per journal, each witnessed by its own journal.head, so the
//     report can include the upgrade's head hash beside day-1's without re-chaining either.
//
// The price: two locks, so a day-1 `replay configure` could run while a hop does. `upgrade run`
// is for an installed cluster, after handoff; doing both at once is the operator's choice and is
// not prevented here.
package upgrade
