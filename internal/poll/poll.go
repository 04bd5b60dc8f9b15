// Package poll is the one place bootstrap waits: Retry runs an operation again after a transient
// failure, with exponential, optionally jittered backoff; Until polls a condition at an interval
// until it holds, fails or a timeout passes. The BMC client, the mirror, the install follower,
// the cluster client (and through it the handoff) and the lab's child processes all wait through
// it, so a change of waiting policy (cancellation, jitter, a fake clock in tests) is made once.
//
// Both take the sleep as a field (Backoff.Sleep, Every.Sleep): the mirror gives its worker slot
// back while it sleeps, tests count or skip sleeps. Neither ever cancels an attempt in flight
// because a deadline passed: the deadline is checked between attempts, so a slow BMC answer that
// arrives is still used. A caller that wants in-flight calls bounded passes a context with a
// deadline, as the cluster client does.
//
// It imports nothing of bootstrap's.
package poll

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"
)

// Sleep waits d or until ctx ends, returning ctx's error in that case. It is the default sleep.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Backoff is a retry policy.
type Backoff struct {
	// Tries is how many times the operation runs at most, the first included (at least 1).
	Tries int
	// Initial is the delay after the first failure; each later delay doubles, up to Max when Max
	// is set.
	Initial, Max time.Duration
	// Jitter spreads each delay uniformly over ±Jitter of it (0.5: from half to one and a half
	// times), so that many workers failing on one peer do not retry in lock-step. 0 is none.
	Jitter float64
	// Sleep waits between tries; nil is Sleep.
	Sleep func(ctx context.Context, d time.Duration) error
}

// Delay returns the delay before try n+1 (n >= 1) without jitter.
func (b Backoff) Delay(n int) time.Duration {
	d := b.Initial
	for i := 1; i < n; i++ {
		d *= 2
		if b.Max > 0 && d >= b.Max {
			return b.Max
		}
	}
	if b.Max > 0 && d > b.Max {
		return b.Max
	}
	return d
}

// Retry runs fn until it succeeds, fails with an error retryable reports false for, or the tries
// are used up; it returns fn's last error. When ctx ends during a wait, the last error is
// returned joined with ctx's.
func Retry(ctx context.Context, b Backoff, retryable func(error) bool, fn func(ctx context.Context) error) error {
	sleep := b.Sleep
	if sleep == nil {
		sleep = Sleep
	}
	for n := 1; ; n++ {
		err := fn(ctx)
		if err == nil || !retryable(err) || n >= b.Tries {
			return err
		}
		d := b.Delay(n)
		if b.Jitter > 0 {
			d = time.Duration(float64(d) * (1 - b.Jitter + 2*b.Jitter*rand.Float64())) //#nosec G404 -- jitter, not security
		}
		if serr := sleep(ctx, d); serr != nil {
			return errors.Join(err, serr)
		}
	}
}

// ErrTimeout is returned by Until when the condition still did not hold after the timeout.
var ErrTimeout = errors.New("timed out")

// Every is a polling policy.
type Every struct {
	// Interval is the wait between two checks (the first check is at once).
	Interval time.Duration
	// Timeout, when set, ends the polling with ErrTimeout once a check made after it passed
	// did not hold. 0 polls until the condition holds or ctx ends.
	Timeout time.Duration
	// Sleep waits between checks; nil is Sleep.
	Sleep func(ctx context.Context, d time.Duration) error
	// Now is the clock the timeout is measured with; nil is time.Now.
	Now func() time.Time
}

// Until checks cond at once, then every Interval, until it reports done (nil), returns an error
// (that error), the timeout passes (ErrTimeout) or ctx ends (ctx's error).
func Until(ctx context.Context, e Every, cond func(ctx context.Context) (done bool, err error)) error {
	sleep, now := e.Sleep, e.Now
	if sleep == nil {
		sleep = Sleep
	}
	if now == nil {
		now = time.Now
	}
	var deadline time.Time
	if e.Timeout > 0 {
		deadline = now().Add(e.Timeout)
	}
	for {
		done, err := cond(ctx)
		if err != nil || done {
			return err
		}
		if !deadline.IsZero() && now().After(deadline) {
			return ErrTimeout
		}
		if err := sleep(ctx, e.Interval); err != nil {
			return err
		}
	}
}
