package cluster

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/bootstrap-dev/bootstrap/internal/poll"
)

// State is what a Check concluded about an object.
type State int

// States a Check returns.
const (
	// Pending: not there yet; keep waiting.
	Pending State = iota
	// Done: the object reached what was waited for.
	Done
	// Failed: the object reached a state it will not leave by itself (CSV Failed, pool Degraded).
	Failed
)

// Check reads an object (nil when it does not exist yet) and says where it stands, with one line
// for progress reports or the failure message.
type Check func(u *unstructured.Unstructured) (State, string)

// FailedError is returned when a Check reports Failed: the object says it will not get there.
type FailedError struct {
	Ref     Ref
	Message string
}

func (e *FailedError) Error() string { return fmt.Sprintf("%s: %s", e.Ref, e.Message) }

// TimeoutError is returned when a wait's deadline passed; Last is the last status seen.
type TimeoutError struct {
	Ref     Ref
	After   time.Duration
	Last    string
	Waiting string
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("%s: not %s after %s (last seen: %s)", e.Ref, e.Waiting, e.After.Round(time.Second), e.Last)
}

// Wait polls r until check reports Done (nil), Failed (*FailedError) or timeout passes
// (*TimeoutError). Each change of the status line is reported to progress. A Failed state is
// confirmed on a second read before giving up, so a controller's transient write does not end a
// run. what ("Synced and Healthy") names the goal in messages.
func (c *Client) Wait(ctx context.Context, r Ref, what string, timeout time.Duration, check Check, progress Progress) error {
	start := time.Now()
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// last is the last line reported; seen the last status a check returned (what a timeout names,
	// rather than a read error near the deadline).
	last, seen, failures := "", "", 0
	var failed error
	err := poll.Until(wctx, poll.Every{Interval: c.interval}, func(wctx context.Context) (bool, error) {
		u, err := c.Get(wctx, r)
		switch {
		case apierrors.IsNotFound(err):
			u, err = nil, nil
		case err != nil && wctx.Err() == nil && !nearDeadline(wctx, c.interval):
			// Transient API errors (a restarting API server during install) are waited through.
			if msg := "cannot read: " + err.Error(); msg != last {
				last = msg
				progress.say("%s: %s", r, msg)
			}
		}
		if err != nil {
			return false, nil
		}
		state, msg := check(u)
		if u == nil && msg == "" {
			msg = "does not exist yet"
		}
		seen = msg
		if msg != last {
			last = msg
			progress.say("%s: %s", r, msg)
		}
		switch state {
		case Done:
			return true, nil
		case Failed:
			if failures++; failures >= 2 {
				failed = &FailedError{Ref: r, Message: msg}
				return false, failed
			}
		default:
			failures = 0
		}
		return false, nil
	})
	switch {
	case err == nil || err == failed: //nolint:errorlint // the very error the check returned
		return err
	case ctx.Err() != nil:
		return fmt.Errorf("wait for %s: %w", r, ctx.Err())
	}
	if seen == "" {
		seen = last
	}
	return &TimeoutError{Ref: r, After: time.Since(start), Last: seen, Waiting: what}
}

// Condition returns the status, reason and message of the condition of the given type in
// status.conditions, and whether it is there.
func Condition(u *unstructured.Unstructured, typ string) (status, reason, message string, ok bool) {
	if u == nil {
		return "", "", "", false
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m == nil || m["type"] != typ {
			continue
		}
		s, _ := m["status"].(string)
		r, _ := m["reason"].(string)
		msg, _ := m["message"].(string)
		return s, r, msg, true
	}
	return "", "", "", false
}

// nearDeadline reports whether ctx ends within d: a read failing then (client-go's rate limiter
// refuses a wait that would pass the deadline) says nothing about the object.
func nearDeadline(ctx context.Context, d time.Duration) bool {
	dl, ok := ctx.Deadline()
	return ok && time.Until(dl) < d
}
