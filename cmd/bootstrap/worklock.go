package main

import "github.com/bootstrap-dev/bootstrap/internal/pipeline"

// lockWork takes the work dir's lock for a command that writes it outside the journal (iso,
// gather, serve): two of them, or one beside a run, would write the same files. A lock held by
// a live process is a *pipeline.LockedError (exit 4), naming the holder and how to clear a stale
// lock. release never fails the command.
func lockWork(dir, command string) (release func(), err error) {
	l, err := pipeline.AcquireLock(dir, command)
	if err != nil {
		return nil, err
	}
	return func() { _ = l.Release() }, nil
}
