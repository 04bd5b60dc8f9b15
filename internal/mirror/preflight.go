package mirror

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/opencontainers/go-digest"
	"github.com/regclient/regclient"
	"github.com/regclient/regclient/types/descriptor"
	"github.com/regclient/regclient/types/errs"
	"github.com/regclient/regclient/types/ref"
)

// RegistryError is a registry that cannot be used, with what to do about it. Callers branch on
// it (errors.As) to fail before copying anything.
type RegistryError struct {
	Host string
	Op   string // "reach", "tls", "auth", "push"
	Err  error
	// Chain describes the certificates the registry presented, when TLS verification failed.
	Chain []string
	// Remedy says what to fix.
	Remedy string
}

func (e *RegistryError) Error() string {
	s := fmt.Sprintf("registry %s: %s: %v", e.Host, e.Op, e.Err)
	if len(e.Chain) > 0 {
		s += "; presented chain: " + strings.Join(e.Chain, " <- ")
	}
	if e.Remedy != "" {
		s += "; " + e.Remedy
	}
	return s
}

func (e *RegistryError) Unwrap() error { return e.Err }

// checkDest pings the destination once, so that an untrusted certificate or refused credentials
// fail the run at once instead of after every blob has been retried.
func checkDest(ctx context.Context, rc *regclient.RegClient, o Options) error {
	r, err := ref.NewHost(o.Dest.Host)
	if err != nil {
		return &RegistryError{Host: o.Dest.Host, Op: "reach", Err: err, Remedy: "give the registry as host[:port]"}
	}
	pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	err = o.withRun().retry(pctx, []string{o.Dest.Host}, func(ctx context.Context) error {
		_, err := rc.Ping(ctx, r)
		return err
	})
	if err != nil {
		return classify(o.Dest, "reach", err)
	}
	return nil
}

// Preflight proves the destination is usable before anything is copied: reachable, TLS trusted
// with the configured CA (on failure the presented chain is shown), credentials accepted, and
// push permission, proven by uploading a tiny scratch blob to NAMESPACE/bootstrap-preflight.
func Preflight(ctx context.Context, o Options, namespace string) error {
	rc, err := newClient(o)
	if err != nil {
		return err
	}
	if err := checkDest(ctx, rc, o); err != nil {
		return err
	}
	repo := "bootstrap-preflight"
	if ns := strings.Trim(namespace, "/"); ns != "" {
		repo = ns + "/" + repo
	}
	r, err := ref.New(o.Dest.Host + "/" + repo)
	if err != nil {
		return err
	}
	data := []byte("bootstrap preflight scratch blob\n")
	d := descriptor.Descriptor{MediaType: "application/octet-stream", Digest: digest.FromBytes(data), Size: int64(len(data))}
	if _, err := rc.BlobPut(ctx, r, d, bytes.NewReader(data)); err != nil {
		return classify(o.Dest, "push", err)
	}
	return nil
}

// classify turns a registry error into a RegistryError with a remedy.
func classify(e Endpoint, op string, err error) error {
	re := &RegistryError{Host: e.Host, Op: op, Err: err}
	var ua x509.UnknownAuthorityError
	var hn x509.HostnameError
	switch {
	case errors.As(err, &ua) || errors.As(err, &hn) || strings.Contains(err.Error(), "x509:") || strings.Contains(err.Error(), "certificate"):
		re.Op = "tls"
		re.Chain = presentedChain(e.Host)
		re.Remedy = "give the registry's CA bundle (registry.caFile / --ca-file); skipping verification (insecure / --dest-tls-verify=false) is a last resort"
	case errors.Is(err, errs.ErrHTTPUnauthorized) || strings.Contains(err.Error(), "401") || strings.Contains(err.Error(), "unauthorized"):
		re.Op = "auth"
		re.Remedy = "check the auth file (registry.authFile / --authfile) has an entry for " + e.Host + " with push rights"
	case strings.Contains(err.Error(), "403") || strings.Contains(err.Error(), "denied"):
		re.Remedy = "the credentials are accepted but may not push here; grant write on the namespace"
	default:
		re.Remedy = "check the registry runs and the host:port is right"
	}
	return re
}

// presentedChain dials the host and describes the certificates it presents (not verified: this
// only explains a verification failure).
func presentedChain(host string) []string {
	addr := host
	if _, _, err := net.SplitHostPort(host); err != nil {
		addr = net.JoinHostPort(host, "443")
	}
	d := &net.Dialer{Timeout: 5 * time.Second}
	conn, err := tls.DialWithDialer(d, "tcp", addr, &tls.Config{InsecureSkipVerify: true}) //#nosec G402 -- reading the chain to explain a failure, nothing is sent
	if err != nil {
		return nil
	}
	defer conn.Close()
	var out []string
	for _, c := range conn.ConnectionState().PeerCertificates {
		out = append(out, fmt.Sprintf("subject=%q issuer=%q notAfter=%s", c.Subject.String(), c.Issuer.String(), c.NotAfter.Format("2006-01-02")))
	}
	return out
}
