// Package pipeline owns the stage runner, the journal (the source of truth for progress), the
// run lock and the event types. Only this package writes the journal.
package pipeline
