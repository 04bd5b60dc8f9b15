package mirror

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"syscall"
	"testing"
	"time"

	"github.com/regclient/regclient/types/errs"
)

func TestTemporary(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("get: %w", io.ErrUnexpectedEOF), true},
		{fmt.Errorf("get: %w", syscall.ECONNRESET), true},
		{fmt.Errorf("503: %w", errs.ErrHTTPStatus), true},
		{fmt.Errorf("put: %w", errs.ErrDigestMismatch), true},
		{fmt.Errorf("manifest: %w", errs.ErrNotFound), false},
		{fmt.Errorf("login: %w", errs.ErrHTTPUnauthorized), false},
		{fmt.Errorf("tls: %w", x509.UnknownAuthorityError{}), false},
		{context.Canceled, false},
		{fmt.Errorf("dial: %w", syscall.ECONNREFUSED), false},
		{nil, false},
	} {
		if got := Temporary(tt.err); got != tt.want {
			t.Errorf("Temporary(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}

func TestRetryStopsOnPermanentAndCountsAttempts(t *testing.T) {
	n := 0
	err := retry(t.Context(), 3, time.Millisecond, 2*time.Millisecond, func(context.Context) error { n++; return io.ErrUnexpectedEOF })
	if !errors.Is(err, io.ErrUnexpectedEOF) || n != 4 {
		t.Errorf("temporary: %d attempts (want 1 + 3 retries), err %v", n, err)
	}
	n = 0
	_ = retry(t.Context(), 3, time.Millisecond, 2*time.Millisecond, func(context.Context) error { n++; return errs.ErrNotFound })
	if n != 1 {
		t.Errorf("permanent error retried: %d attempts", n)
	}
}
