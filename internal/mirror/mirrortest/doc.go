// Package mirrortest builds what the mirror tests and the lab need: an in-process distribution v3
// registry (optionally with TLS and htpasswd, like Quay), deterministic synthetic content
// (OpenShift-shaped release payloads with release-manifests/image-references, file-based catalog
// images with the operators.operatorframework.io.index.configs.v1 label, multi-arch indexes,
// shared base layers, cosign-style signatures) and a fault injector (5xx bursts, connections cut
// in the middle of a blob, slow links, permanently failing paths).
//
// It is test support: the binary's main path never imports it.
package mirrortest
