// Package install follows an agent-based OpenShift install to its end and says why it is stuck.
//
// It runs `openshift-install agent wait-for bootstrap-complete` and then `install-complete`,
// streaming their output line by line; in parallel it reads the rendezvous host's assisted-service
// API (port 8090, the same API openshift-install polls) and reports each host validation that
// fails (NTP, connectivity to the majority of hosts, installation disk speed, ...) by host and
// name the moment it appears, and again when it passes. After the installer is done it checks the
// Kubernetes API itself: ClusterVersion Available, no ClusterOperator Degraded, every profile node
// Ready. The kubeconfig is copied into the work dir with mode 0600.
//
// The package never prints: it reports through callbacks and returns typed results.
package install
