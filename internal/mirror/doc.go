// Package mirror copies OpenShift content (release payloads, filtered operator catalogs, additional
// images) from source registries into a local mirror registry and writes what a disconnected cluster
// needs to use it: ImageDigestMirrorSet, ImageTagMirrorSet, CatalogSources and content.json.
//
// The package owns these things, behind one driver (driver.go: Load and Run, what `bootstrap
// mirror` and the mirror stage both call):
//
//   - resolution: an oc-mirror v2 ImageSetConfiguration (isc.go) becomes a list of images
//     (release.go reads release-manifests/image-references, catalog.go reads the file-based
//     catalog, filter.go selects from it with oc-mirror's own filter library and validates the
//     result with operator-registry's model, iscoperators.go refuses what oc-mirror refuses);
//   - planning: every image's manifest tree is read from the source and the unique blob set, with
//     sizes from the manifests, is computed (plan.go);
//   - copying: one global worker pool over unique blobs, with a single in-flight entry per digest so
//     a layer shared by many images is fetched once, HEAD and cross-repository mount at the
//     destination before any transfer, digest-verified streaming, and continue-on-error
//     (copy.go, blobs.go); retries with backoff and jitter are per operation, a waiting retry
//     gives its worker back, and only whole-host failures open a per-host circuit (retry.go);
//   - release channels: resolved from the release repository's tags, not from the update graph
//     (channels.go documents the rule and how it differs from oc-mirror's Cincinnati lookup);
//   - catalogs: a filtered catalog is rebuilt as a new image holding only the selection, with the
//     stale opm cache removed (catalogbuild.go), and pushed instead of the original, into the
//     registry or into a disk mirror's layout;
//   - disk mirrors: Options.Dest.Dir writes one OCI layout (content-addressed, incremental) and
//     Options.SourceDir pushes from it, every blob's digest checked before it is sent; with an
//     archive size the layout is packed into numbered tar parts (archive.go);
//   - evidence: the mirror sets, CatalogSources and content.json (outputs.go), a read-only
//     completeness check against the destination (verify.go) and a registry preflight, step by
//     step (preflight.go: reachable, TLS trusted, credentials, push, sources readable).
//
// Test content (synthetic release payloads, file-based catalogs, multi-arch indexes, shared
// layers, signatures), an in-process registry and a fault injector live in package mirrortest.
//
// It never prints, never reads flags and imports no package of this module but the leaves units
// (byte formatting), filehash, fsroot (paths confined to a folder), suggest (the closest
// names of a misspelled package or channel), yamlstrict (the strict YAML decoder the site
// profile uses too, for the ImageSetConfiguration), finding (its problems), poll (retry with
// backoff) and redact (a registry's error text is redacted, then cut), so never the pipeline: callers pass a
// context, typed options and a progress callback, and receive typed results.
package mirror
