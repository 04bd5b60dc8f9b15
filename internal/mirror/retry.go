package mirror

import (
	"context"
	"crypto/x509"
	"errors"
	"math/rand/v2"
	"net"
	"syscall"
	"time"

	"github.com/regclient/regclient/types/errs"
)

// Temporary reports whether err is worth retrying: server errors, rate limits, dropped connections,
// short reads, digest mismatches (a proxy that corrupted a stream) and timeouts are; a missing
// image, refused credentials, an untrusted certificate, a bad reference, a refused connection, an
// unknown host and cancellation are not.
//
// regclient already retries single requests (5xx, 429 with Retry-After, network errors) a couple
// of times; this outer retry repeats a whole blob transfer, which regclient cannot do once a
// streamed upload has started.
func Temporary(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, errs.ErrCanceled) {
		return false
	}
	// Nothing listening, or a name that does not resolve: regclient has already retried the
	// request; retrying the operation again only makes a misconfigured run slow to report it.
	// The next run retries whatever is missing.
	if errors.Is(err, syscall.ECONNREFUSED) {
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

// retry runs fn until it succeeds, fails with a permanent error, the context ends or the attempts
// are used up. Delays double from base up to max, each with ±50 % jitter so that many workers
// hitting the same failing registry do not retry in lock-step.
func retry(ctx context.Context, attempts int, base, max time.Duration, fn func(ctx context.Context) error) error {
	var err error
	delay := base
	for i := 0; ; i++ {
		err = fn(ctx)
		if err == nil || !Temporary(err) || i >= attempts {
			return err
		}
		j := time.Duration(float64(delay) * (0.5 + rand.Float64())) //#nosec G404 -- jitter, not security
		t := time.NewTimer(j)
		select {
		case <-ctx.Done():
			t.Stop()
			return errors.Join(err, ctx.Err())
		case <-t.C:
		}
		delay *= 2
		if delay > max {
			delay = max
		}
	}
}
