// Package agentiso owns everything between a validated site profile and a bootable agent ISO:
// rendering install-config.yaml and agent-config.yaml, the day-1 extra manifests (module
// blacklists, OperatorHub, the mirror's CatalogSources, the user's own manifests), the checks the
// installer would otherwise make late and silently, running openshift-install, and the per-node
// ISO views served over HTTP.
//
// The per-node views never copy the base ISO: a CoreOS live ISO carries fixed-size embed areas (the
// ignition initrd area in images/ignition.img and the kernel-argument areas in the boot configs,
// located as coreos-installer locates them), so a node's ISO is the base ISO's bytes with a few
// patched regions overlaid while streaming.
//
// Like every domain package it never prints, never reads flags and never imports the pipeline: it
// takes typed options and a progress callback and returns typed results.
package agentiso
