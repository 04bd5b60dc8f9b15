// Package harness runs the local lab: stand-ins for everything a site has (DNS, NTP, the source
// and mirror registries, Redfish BMCs, sshd on every node address, a Git server, and the cluster:
// a real kube-apiserver with the CRDs plus a player standing in for its controllers, and Argo CD's
// own controllers), all on loopback, and the site profile that points bootstrap at them.
// `go run ./e2e/lab up` and the e2e tests use it.
//
// The cluster (cluster.go, player.go, reconcile.go, olm.go) starts its API server only after
// every simulated BMC booted the ISO, then plays the install (rendezvous API host states, Nodes
// Ready, ClusterVersion and ClusterOperators Available, wait-for markers the openshift-install
// test double watches), and keeps reconciling as MCO and OLM would: CatalogSources READY, pools
// rendering their MachineConfigs and rolling out, Subscriptions resolved against the lab's
// catalogs to InstallPlans and CSVs Succeeded (or ResolutionFailed, in OLM's words).
//
// Where the simulation ends and Argo CD begins: when the OpenShift GitOps operator's CSV
// succeeds, the player does what the operator would for the default instance in
// openshift-gitops, and no more: it writes Argo CD's configuration (argocd-cm and the other
// ConfigMaps, argocd-secret, the default AppProject) and starts Argo CD's own
// application-controller, repo-server and applicationset-controller (v3.6.2, built by
// scripts/argocd.sh) and redis as processes against the API server (internal/handoff/argocdtest,
// which also restarts one that exits, as a kubelet restarts a crashed container); once they run
// it marks the openshift-gitops-server Deployment available and creates its Route (no
// argocd-server runs). From there everything about Applications is Argo CD's: it clones the
// lab's Git server over TLS with the lab CA and the credentials bootstrap's handoff wrote (the
// repository Secret and argocd-tls-certs-cm, mounted as files as a kubelet would), renders the
// repository's kustomizations, applies them, and reports sync and health itself. The player
// never writes an Application's status. What Argo CD applies that a controller would act on
// (Subscriptions, Deployments) is again simulated: OLM by the player, nothing else.
//
// The Git repository (gitsite.go) is laid out as a site's: cluster-config/argocd (the root
// application's path: the child Applications and the tenants ApplicationSet),
// cluster-config/applications, base/operators (GPU Operator, Network Operator, SR-IOV
// subscriptions), base/infra, overlays/prod, and a tenant template the ApplicationSet stamps for
// each cluster-config/tenants/<name>/tenant.yaml.
//
// A Lab is a list of Components started in order and stopped in reverse. Each component starts
// its server on an address the lab hands out, then contributes to the site profile (Configure);
// components that must see the whole profile (DNS publishes every name) implement Finalizer. To
// add a stand-in, write a file with a type implementing Component and append it in Default.
//
// Address plan: the lab owns one loopback /24, 127.X.Y.0/24, picked from the lab dir so that two
// labs on one machine do not collide and one lab dir keeps its addresses across runs (ports
// too, remembered in lab-state.json). Nothing outside 127.0.0.0/8 is ever used.
//
//	.1 jump host (ISO server)   .5 API VIP   .7 ingress VIP   .21-.23 control plane   .31-.32 GPU workers
//	.53 DNS      .123 NTP         .60-.69 registries (.64 update service)   .70 Git   .100+ BMCs
//	8090 on .21: the rendezvous API; the kube-apiserver listens on 127.0.0.1 (the VIP stays free)
package harness
