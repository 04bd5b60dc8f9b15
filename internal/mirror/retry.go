package mirror

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/regclient/regclient/types/errs"

	"github.com/bootstrap-dev/bootstrap/internal/poll"
)

// Retries and backoff are per operation: one blob transfer, one manifest read or push. A
// repository that answers 500 for every request fails its own operations after Options.Retries
// retries with capped, jittered backoff, and nothing else waits for it:
//
//   - the registry client's own retry and per-host backoff are switched off (newClient): in
//     regclient they are per host, so one broken repository made every request to the same
//     registry sleep, doubling up to the backoff cap (a run with one 500-ing image took minutes);
//   - an operation waiting out its backoff gives its worker slot back (slotFrom), so the other
//     images keep every worker busy while the broken one waits;
//   - only failures that concern the whole host (nothing listening, a name that does not resolve,
//     a dial timeout, an untrusted or broken TLS handshake) count toward a per-host circuit
//     (circuits): after circuitThreshold of them in a row without a success, operations on that
//     host fail at once with a *HostDownError instead of each trying the dead host, and one probe
//     is let through every cooldown to close the circuit again when the host is back.

// circuitThreshold is how many whole-host failures in a row open a host's circuit.
const circuitThreshold = 3

// Temporary reports whether err is worth retrying: server errors, rate limits, dropped connections,
// short reads, digest mismatches (a proxy that corrupted a stream) and timeouts are; a missing
// image, refused credentials, an untrusted certificate, a bad reference, a refused connection, an
// unknown host, a host whose circuit is open and cancellation are not.
func Temporary(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, errs.ErrCanceled) {
		return false
	}
	var hd *HostDownError
	var pe *permanentError
	if errors.As(err, &hd) || errors.As(err, &pe) {
		return false
	}
	// Nothing listening, or a name that does not resolve: retrying the operation only makes a
	// misconfigured run slow to report it (the host circuit stops the other operations). The next
	// run retries whatever is missing.
	if errors.Is(err, syscall.ECONNREFUSED) {
		return false
	}
	// A file missing from an OCI layout (a disk mirror) does not appear by retrying.
	if errors.Is(err, fs.ErrNotExist) {
		return false
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
		return false
	}
	var ua x509.UnknownAuthorityError
	var hn x509.HostnameError
	var ci x509.CertificateInvalidError
	if errors.As(err, &ua) || errors.As(err, &hn) || errors.As(err, &ci) {
		return false
	}
	for _, perm := range []error{
		errs.ErrNotFound, errs.ErrHTTPUnauthorized, errs.ErrInvalidReference, errs.ErrParsingFailed,
		errs.ErrUnsupportedMediaType, errs.ErrUnsupported, errs.ErrMissingDigest, errs.ErrNotImplemented,
	} {
		if errors.Is(err, perm) {
			return false
		}
	}
	return true
}

// hostWide reports whether err says the whole host is unusable rather than one request or one
// repository: a refused or timed-out connection, an unknown or unreachable host, a TLS handshake
// that failed or presented an untrusted certificate. HTTP errors (500 for one repository, 404,
// 401) never are.
func hostWide(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH) {
		return true
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return true
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var ua x509.UnknownAuthorityError
	var hn x509.HostnameError
	var ci x509.CertificateInvalidError
	var rh tls.RecordHeaderError
	var ae tls.AlertError
	var cv *tls.CertificateVerificationError
	if errors.As(err, &ua) || errors.As(err, &hn) || errors.As(err, &ci) || errors.As(err, &rh) || errors.As(err, &ae) || errors.As(err, &cv) {
		return true
	}
	return strings.Contains(err.Error(), "tls: handshake failure")
}

// HostDownError is returned for operations on a host whose circuit is open: the last whole-host
// failures are in Err.
type HostDownError struct {
	Host string
	Err  error
}

func (e *HostDownError) Error() string {
	return fmt.Sprintf("registry %s is down (%d failures in a row that concern the whole host; later operations on it are not tried): %v",
		e.Host, circuitThreshold, e.Err)
}

func (e *HostDownError) Unwrap() error { return e.Err }

// permanentError marks an error that retrying cannot fix (content that is not what it should be).
type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

func permanent(err error) error { return &permanentError{err: err} }

// hostError attributes an error to the registry that produced it, for the host circuits.
type hostError struct {
	host string
	err  error
}

func (e *hostError) Error() string { return e.err.Error() }
func (e *hostError) Unwrap() error { return e.err }

// onHost wraps err (when not nil) with the host it came from.
func onHost(host string, err error) error {
	if err == nil || host == "" {
		return err
	}
	return &hostError{host: host, err: err}
}

// circuits are the per-host circuit breakers of one run.
type circuits struct {
	cooldown time.Duration
	mu       sync.Mutex
	hosts    map[string]*circuit
}

type circuit struct {
	fails     int       // whole-host failures in a row
	last      error     // the last of them
	openUntil time.Time // while open, the time the next probe may go
	probing   bool      // a probe is out
}

func newCircuits(cooldown time.Duration) *circuits {
	if cooldown <= 0 {
		cooldown = 15 * time.Second
	}
	return &circuits{cooldown: cooldown, hosts: map[string]*circuit{}}
}

// allow returns a *HostDownError when host's circuit is open and it is not yet time for a probe;
// otherwise nil, marking the caller as the probe when the circuit is open.
func (c *circuits) allow(host string) (probe bool, err error) {
	if c == nil || host == "" {
		return false, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	h := c.hosts[host]
	if h == nil || h.fails < circuitThreshold {
		return false, nil
	}
	if h.probing || time.Now().Before(h.openUntil) {
		return false, &HostDownError{Host: host, Err: h.last}
	}
	h.probing = true
	return true, nil
}

// record notes the outcome of an operation on hosts: a success closes their circuits, a
// whole-host failure counts toward the host it is attributed to (or the only host).
func (c *circuits) record(hosts []string, probe bool, err error) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	get := func(h string) *circuit {
		if c.hosts[h] == nil {
			c.hosts[h] = &circuit{}
		}
		return c.hosts[h]
	}
	if probe {
		for _, h := range hosts {
			get(h).probing = false
		}
	}
	if err == nil {
		for _, h := range hosts {
			if h != "" {
				*get(h) = circuit{}
			}
		}
		return
	}
	var hd *HostDownError
	if errors.As(err, &hd) || !hostWide(err) {
		return
	}
	host := ""
	var he *hostError
	if errors.As(err, &he) {
		host = he.host
	} else if len(hosts) == 1 {
		host = hosts[0]
	}
	if host == "" {
		return
	}
	h := get(host)
	h.fails++
	h.last = err
	if h.fails >= circuitThreshold {
		h.openUntil = time.Now().Add(c.cooldown)
	}
}

// slotKey marks a context whose goroutine holds a worker slot (a buffered channel entry).
type slotKey struct{}

// withSlot returns ctx carrying the worker slot its goroutine holds in slots.
func withSlot(ctx context.Context, slots chan struct{}) context.Context {
	return context.WithValue(ctx, slotKey{}, slots)
}

// slotFrom returns the worker slots the context's goroutine holds one of, or nil.
func slotFrom(ctx context.Context) chan struct{} {
	s, _ := ctx.Value(slotKey{}).(chan struct{})
	return s
}

// retry runs fn until it succeeds, fails with a permanent error, the context ends or the attempts
// (retries after the first try) are used up (poll.Retry). Delays double from base up to max, each with ±50 % jitter so that many workers
// hitting the same failing registry do not retry in lock-step.
func retry(ctx context.Context, attempts int, base, max time.Duration, fn func(ctx context.Context) error) error {
	return retryOn(ctx, nil, nil, attempts, base, max, fn)
}

// retry runs fn with the options' retry policy and the run's host circuits; hosts are the
// registries fn talks to (errors wrapped by onHost name the one that failed).
func (o Options) retry(ctx context.Context, hosts []string, fn func(ctx context.Context) error) error {
	return o.clipPeer(retryOn(ctx, o.circuits, hosts, o.Retries, o.RetryBase, o.RetryMax, fn))
}

func retryOn(ctx context.Context, cs *circuits, hosts []string, attempts int, base, max time.Duration, fn func(ctx context.Context) error) error {
	var last error
	b := poll.Backoff{Tries: attempts + 1, Initial: base, Max: max, Jitter: 0.5, Sleep: sleepWithoutSlot}
	return poll.Retry(ctx, b, Temporary, func(ctx context.Context) error {
		probe := false
		for _, h := range hosts {
			p, herr := cs.allow(h)
			if herr != nil { // not Temporary: ends the retries
				if last != nil {
					return errors.Join(herr, last)
				}
				return herr
			}
			probe = probe || p
		}
		last = fn(ctx)
		cs.record(hosts, probe, last)
		return last
	})
}

// sleepWithoutSlot waits d, giving the caller's worker slot (if any) back for the wait so that
// other operations use it, and taking one again before returning.
func sleepWithoutSlot(ctx context.Context, d time.Duration) error {
	slots := slotFrom(ctx)
	if slots != nil {
		<-slots
	}
	err := poll.Sleep(ctx, d)
	if slots != nil {
		slots <- struct{}{} // taken back even when cancelled: the caller's deferred release expects it
	}
	return err
}
