package bmc

import (
	"context"
	"fmt"
	"time"
)

// Option configures Connect, BootNode, BootAll and Preflight.
type Option func(*config) error

type config struct {
	callTimeout    time.Duration
	attempts       int
	backoff        time.Duration
	poll           time.Duration
	confirmTimeout time.Duration
	concurrency    int // 0: every node, MaxConcurrency at most
	resumeGrace    time.Duration
	handedOver     func(node string) bool
	evidence       func(ctx context.Context, node, url string, since time.Time) error
	progress       func(Progress)
}

func newConfig(opts []Option) (config, error) {
	c := config{
		callTimeout:    60 * time.Second, // iDRAC9 answers slowly while its LC is busy
		attempts:       5,
		backoff:        2 * time.Second,
		poll:           2 * time.Second,
		confirmTimeout: 10 * time.Minute,
		concurrency:    0,               // every node (MaxConcurrency at most)
		resumeGrace:    3 * time.Minute, // an iDRAC9 warm reset reaches the boot menu within ~2 min
		progress:       func(Progress) {},
	}
	for _, o := range opts {
		if err := o(&c); err != nil {
			return c, err
		}
	}
	return c, nil
}

// WithCallTimeout bounds each Redfish call.
func WithCallTimeout(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return fmt.Errorf("bmc: call timeout must be positive, got %s", d)
		}
		c.callTimeout = d
		return nil
	}
}

// WithRetry sets how many times a transient failure is tried and the first backoff (doubled each time).
func WithRetry(attempts int, backoff time.Duration) Option {
	return func(c *config) error {
		if attempts < 1 || backoff < 0 {
			return fmt.Errorf("bmc: retry needs attempts >= 1 and backoff >= 0, got %d, %s", attempts, backoff)
		}
		c.attempts, c.backoff = attempts, backoff
		return nil
	}
}

// WithPoll sets how often state is read back while waiting, and how long to wait for a node to
// come up from the ISO after the power action.
func WithPoll(interval, confirmTimeout time.Duration) Option {
	return func(c *config) error {
		if interval <= 0 || confirmTimeout <= 0 {
			return fmt.Errorf("bmc: poll interval and confirm timeout must be positive")
		}
		c.poll, c.confirmTimeout = interval, confirmTimeout
		return nil
	}
}

// WithConfirmTimeout sets how long to wait for a node to come up from the ISO after the power
// action (default 10m), keeping the poll interval.
func WithConfirmTimeout(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return fmt.Errorf("bmc: confirm timeout must be positive, got %s", d)
		}
		c.confirmTimeout = d
		return nil
	}
}

// MaxConcurrency caps how many nodes are worked on at once by default. Boot work is waiting on
// BMCs, so every node at once is what makes a rack boot in the time of one node; the cap bounds
// what the jump host holds open (each node in flight keeps two or three connections: Redfish
// calls and its BMC reading the ISO), well under the usual 1024 open files.
const MaxConcurrency = 256

// WithConcurrency bounds how many nodes BootAll, VerifyAll and PreflightAll work on at once
// (default: every node, MaxConcurrency at most).
func WithConcurrency(n int) Option {
	return func(c *config) error {
		if n < 1 || n > MaxConcurrency {
			return fmt.Errorf("bmc: concurrency must be 1 to %d, got %d", MaxConcurrency, n)
		}
		c.concurrency = n
		return nil
	}
}

// WithResumeGrace sets how long a resumed run watches a node whose power action was started but
// not journaled (a crash in between) for signs that it took effect, before acting again.
func WithResumeGrace(d time.Duration) Option {
	return func(c *config) error {
		if d < 0 {
			return fmt.Errorf("bmc: resume grace must be >= 0, got %s", d)
		}
		c.resumeGrace = d
		return nil
	}
}

// WithBootEvidence adds a last confirmation: after the BMC shows the one-time boot consumed,
// evidence must return nil, saying the node really read its ISO after since (the ISO server's
// fetch log is the natural witness). It catches the server that ignored the one-time boot and
// started from its disk, which the BMC alone does not reveal. evidence is polled until it
// succeeds or the confirm timeout passes.
func WithBootEvidence(evidence func(ctx context.Context, node, url string, since time.Time) error) Option {
	return func(c *config) error {
		c.evidence = evidence
		return nil
	}
}

// WithHandedOver tells VerifyBooted which nodes may have been handed over to their disk by
// TakeOverrideOff (the install stage does it for nodes booted with a persistent override).
func WithHandedOver(accept func(node string) bool) Option {
	return func(c *config) error {
		c.handedOver = accept
		return nil
	}
}

// WithProgress receives per-node progress. It must be cheap and safe from many goroutines.
func WithProgress(f func(Progress)) Option {
	return func(c *config) error {
		if f != nil {
			c.progress = f
		}
		return nil
	}
}

// Progress reports one node's step.
type Progress struct {
	Node    string
	Step    string // a Step constant
	Done    bool   // the step finished (false: started)
	Skipped bool   // already done in an earlier run
	ByRead  bool   // with Skipped: the BMC was read and shows the step done (else: journaled only)
	Message string
}
