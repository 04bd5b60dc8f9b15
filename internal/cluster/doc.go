// Package cluster applies manifests to a Kubernetes API server and waits for what they cause.
//
// It owns three things: server-side apply under the field manager "bootstrap" (so a second apply of
// equal content is a no-op the API server itself reports), condition waits that poll an object and
// report progress through a callback until a check says done, failed or the deadline passes, and the
// configure stage's day-1 work (mirror sets, catalog sources, OperatorHub, CA trust, MachineConfigs,
// the kernel-module blacklist check). Everything is unstructured: OpenShift, OLM and Argo CD objects
// are addressed by group/version/kind, so no vendor Go types are needed.
//
// The package never prints and never reads flags; it takes a context, typed options and a progress
// callback and returns typed results.
package cluster
