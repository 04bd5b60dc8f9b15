// Package pipeline owns the stage runner, the journal (the source of truth for progress), the
// run lock and the event types. Only this package writes the journal.
//
// The journal (journal.jsonl in the work dir) is one JSON Entry per line, append-only, fsynced
// after every line, each line carrying the SHA-256 of the previous line (VerifyChain). A crash
// can leave only a torn last line: readers ignore it with a warning and the next OpenJournal
// truncates it before appending. What the journal holds is what stages hand over (outputs, step
// data) plus error texts: stages must never hand over secrets, only references to them (a file
// path, an environment variable name); Runner.Scrub and the built-in removal of URL credentials
// from error texts are a second line of defence, not the first.
//
// The lock (lock in the work dir) is created with O_EXCL and holds host, pid, boot id, process
// start time and command. A second run gets *LockedError naming the holder. A lock is taken over
// automatically only when it is provably stale on this host (the pid is dead or reused, or the
// host rebooted since); a lock from another host, or an unreadable one, is explained and left
// for a person to remove. lock.guard (flock) serializes the check-and-takeover, and the journal
// itself is flocked while open for writing, so even a deleted lock file cannot let two writers in.
//
// The runner applies the resume rule (resume.go, the one place Run and Plan decide it): a stage is
// skipped only when its last attempt succeeded,
// its input fingerprint (SHA-256 of the JSON of Stage.Inputs) is unchanged and its Verify still
// holds. A stage that runs with new inputs, or ends with a different output, marks every later
// finished stage stale; an AlwaysRunner (preflight) runs on every pass and never does. Inside a
// stage, Steps skips steps journaled in the same attempt with the same fingerprint: an
// interrupted or failed attempt resumes; a fresh attempt (new inputs, stale, replay, or re-run
// after success) starts from nothing. Steps.Previous lets a stage see the latest record of a step
// from earlier attempts (never in a replay), so work on items whose own inputs did not change
// (a node already booted when one more node is added) is carried over instead of redone; the
// stage records each item's inputs in its step data and decides.
//
// For stage authors: declare the stage's output with a constant OutputKey[T] beside the stage (its
// name, and "@N" once T's JSON form changed incompatibly), let the stage implement OutputTyped with it, and read other stages' outputs only through their keys;
// key node-level steps with NodeStep(node, action) so status groups them by node; return errors
// that implement Remedier (`Remedy() string`, anywhere in the wrap chain) to have the remedy
// journaled and shown by status; Record from as many goroutines as you like (each
// Record returns after its line is fsynced); keep step data and outputs to references, digests,
// hashes and counts (an entry is at most MaxEntryBytes).
package pipeline
