// Package harness runs the local lab: stand-ins for everything a site has (DNS, NTP, and later
// the registries, Redfish BMCs, a kube-apiserver and sshd), all on loopback, and the site profile
// that points bootstrap at them. `go run ./e2e/lab up` and the e2e tests use it.
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
//	.53 DNS      .123 NTP         .60-.69 registries   .70 Git   .100+ BMCs (later issues)
package harness
