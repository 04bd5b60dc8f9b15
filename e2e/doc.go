// Package e2e holds the whole-pipeline tests (build tag e2e, `make e2e`): they start the local
// lab (e2e/lab/harness) in the test process, drive the built bootstrap binary against its site
// profile, and check the world afterwards through the lab's stand-ins (registry storage, BMC
// simulator counters) and the journal.
package e2e
