package mirror

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/regclient/regclient/scheme"
	"github.com/regclient/regclient/types/errs"
	"github.com/regclient/regclient/types/ref"
)

// repoState is one destination repository's answer to "can it hold anything yet?".
type repoState struct {
	ready chan struct{} // closed once fresh is known
	fresh bool
}

// openRepoLog reads the repositories earlier runs wrote to and opens the log for appending.
func (e *engine) openRepoLog(path string) (closeLog func(), err error) {
	e.written = map[string]bool{}
	// read as a stream through the safe opener, like the blob log; a torn last line (a name cut
	// short) names no repository and is ended before the next append
	torn, err := readStateLog(path, func(line string) {
		for _, l := range strings.Fields(line) {
			e.written[l] = true
		}
	})
	if err != nil {
		return nil, fmt.Errorf("repository log: %w (make it readable; deleted, a killed run's blobs in new repositories are only fetched again)", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("repository log: %w (the work dir must be writable)", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return nil, fmt.Errorf("repository log: %w (the work dir must be writable)", err)
	}
	if torn {
		_, _ = f.WriteString("\n")
	}
	e.repoLog = f
	return func() { _ = f.Close() }, nil
}

// freshRepo says whether the destination repository dst cannot hold any blob yet, so that an
// upload there needs no existence check: the registry does not know it (its tag list answers
// 404) and the repository log names no earlier run that wrote to it. The first caller for a
// repository asks the registry; when the answer is "fresh" it records the repository in the log
// before anything is written there: a run killed before its first manifest leaves blobs in a
// repository the registry still calls unknown, and the log sends the next run back to checking
// (and not fetching) them. Every caller that writes to a destination repository calls this first.
// Without a log, or on any answer but 404 (a registry that hides unknown repositories behind 401
// included), every blob is checked.
func (e *engine) freshRepo(ctx context.Context, dst ref.Ref) bool {
	if e.repoLog == nil {
		return false
	}
	key := dst.Registry + "/" + dst.Repository
	e.mu.Lock()
	rs := e.repos[key]
	if rs != nil {
		e.mu.Unlock()
		select {
		case <-rs.ready:
			return rs.fresh
		case <-ctx.Done():
			return false
		}
	}
	rs = &repoState{ready: make(chan struct{})}
	e.repos[key] = rs
	known := e.written[key]
	e.mu.Unlock()
	defer close(rs.ready)
	if known {
		return false
	}
	if _, err := e.rc.TagList(ctx, dst.SetTag(""), scheme.WithTagLimit(1)); !errors.Is(err, errs.ErrNotFound) {
		return false
	}
	e.mu.Lock()
	_, err := e.repoLog.WriteString(key + "\n") // one write(2): on disk for the next run even after SIGKILL
	e.mu.Unlock()
	rs.fresh = err == nil
	return rs.fresh
}
