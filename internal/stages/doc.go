// Package stages holds the thin adapters that turn each domain package (preflight, mirror,
// agentiso, bmc, cluster, handoff) into a pipeline.Stage: they read the pipeline.Env, call the
// domain package with typed options and turn its progress callbacks into pipeline events.
package stages
