package poll

import (
	"context"
	"errors"
	"testing"
	"time"
)

var errTransient = errors.New("transient")
var errPermanent = errors.New("permanent")

func transient(err error) bool { return errors.Is(err, errTransient) }

// sleeps records the waits asked for and never sleeps.
type sleeps []time.Duration

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	*s = append(*s, d)
	return ctx.Err()
}

func TestRetryBacksOffUntilSuccess(t *testing.T) {
	var s sleeps
	calls := 0
	err := Retry(context.Background(), Backoff{Tries: 5, Initial: time.Second, Max: 3 * time.Second, Sleep: s.sleep}, transient,
		func(context.Context) error {
			if calls++; calls < 4 {
				return errTransient
			}
			return nil
		})
	if err != nil || calls != 4 {
		t.Fatalf("err %v after %d calls, want nil after 4", err, calls)
	}
	want := []time.Duration{time.Second, 2 * time.Second, 3 * time.Second}
	if len(s) != len(want) {
		t.Fatalf("slept %v, want %v", s, want)
	}
	for i := range want {
		if s[i] != want[i] {
			t.Fatalf("slept %v, want %v (doubling, capped at Max)", s, want)
		}
	}
}

func TestRetryStopsOnPermanentAndAfterTries(t *testing.T) {
	var s sleeps
	calls := 0
	err := Retry(context.Background(), Backoff{Tries: 5, Initial: time.Second, Sleep: s.sleep}, transient,
		func(context.Context) error { calls++; return errPermanent })
	if !errors.Is(err, errPermanent) || calls != 1 || len(s) != 0 {
		t.Fatalf("permanent: err %v, %d calls, %d sleeps; want it at once", err, calls, len(s))
	}
	calls, s = 0, nil
	err = Retry(context.Background(), Backoff{Tries: 3, Initial: time.Second, Sleep: s.sleep}, transient,
		func(context.Context) error { calls++; return errTransient })
	if !errors.Is(err, errTransient) || calls != 3 || len(s) != 2 {
		t.Fatalf("exhausted: err %v, %d calls, %d sleeps; want the last error after 3 calls and 2 sleeps", err, calls, len(s))
	}
	// Tries 0 or 1: one call, no wait.
	calls = 0
	_ = Retry(context.Background(), Backoff{}, transient, func(context.Context) error { calls++; return errTransient })
	if calls != 1 {
		t.Fatalf("Tries 0 ran %d times, want once", calls)
	}
}

func TestRetryJitterStaysInBand(t *testing.T) {
	var s sleeps
	_ = Retry(context.Background(), Backoff{Tries: 200, Initial: time.Second, Max: time.Second, Jitter: 0.5, Sleep: s.sleep}, transient,
		func(context.Context) error { return errTransient })
	lo, hi, distinct := time.Hour, time.Duration(0), map[time.Duration]bool{}
	for _, d := range s {
		lo, hi = min(lo, d), max(hi, d)
		distinct[d] = true
	}
	if lo < 500*time.Millisecond || hi > 1500*time.Millisecond || len(distinct) < 100 {
		t.Fatalf("199 jittered delays of 1s ±50%%: min %s max %s, %d distinct", lo, hi, len(distinct))
	}
}

func TestRetryCancelledWhileWaitingKeepsTheError(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	err := Retry(ctx, Backoff{Tries: 3, Initial: time.Hour}, transient, func(context.Context) error {
		cancel()
		return errTransient
	})
	if !errors.Is(err, errTransient) || !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want the operation's error joined with context.Canceled", err)
	}
}

// fakeClock advances only when slept on.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }
func (c *fakeClock) sleep(ctx context.Context, d time.Duration) error {
	c.t = c.t.Add(d)
	return ctx.Err()
}

func TestUntil(t *testing.T) {
	c := &fakeClock{t: time.Unix(0, 0)}
	checks := 0
	err := Until(context.Background(), Every{Interval: time.Second, Timeout: 10 * time.Second, Sleep: c.sleep, Now: c.now},
		func(context.Context) (bool, error) { checks++; return checks == 3, nil })
	if err != nil || checks != 3 || c.t != time.Unix(2, 0) {
		t.Fatalf("done on the third check: err %v, %d checks, clock %v", err, checks, c.t)
	}

	c, checks = &fakeClock{t: time.Unix(0, 0)}, 0
	err = Until(context.Background(), Every{Interval: time.Second, Timeout: 10 * time.Second, Sleep: c.sleep, Now: c.now},
		func(context.Context) (bool, error) { checks++; return false, nil })
	// Checks at 0..10 s hold the deadline; the check at 11 s is the first after it.
	if !errors.Is(err, ErrTimeout) || checks != 12 {
		t.Fatalf("never done: err %v after %d checks, want ErrTimeout after 12", err, checks)
	}

	checks = 0
	err = Until(context.Background(), Every{Interval: time.Second, Sleep: c.sleep, Now: c.now},
		func(context.Context) (bool, error) { checks++; return false, errPermanent })
	if !errors.Is(err, errPermanent) || checks != 1 {
		t.Fatalf("failing condition: err %v after %d checks", err, checks)
	}

	ctx, cancel := context.WithCancel(context.Background())
	err = Until(ctx, Every{Interval: time.Hour}, func(context.Context) (bool, error) { cancel(); return false, nil })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: err %v", err)
	}
}

func TestSleepHonoursContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	if err := Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("Sleep on a cancelled context: %v", err)
	}
	if time.Since(start) > time.Minute {
		t.Fatal("Sleep did not return when its context ended")
	}
	if err := Sleep(context.Background(), 0); err != nil {
		t.Fatalf("Sleep(0): %v", err)
	}
}
