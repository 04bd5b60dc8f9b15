package bmc

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/fsroot"
	"github.com/bootstrap-dev/bootstrap/internal/peerbody"
	"github.com/bootstrap-dev/bootstrap/internal/redact"
	"github.com/bootstrap-dev/bootstrap/internal/redirect"
)

// raw is a minimal Redfish client for the reads and Dell actions bmclib does not expose. It uses
// HTTP basic auth, which iDRAC9 accepts on every Redfish URI, so it never takes one of the
// iDRAC's eight sessions and preflight stays strictly read-only.
type raw struct {
	base string // scheme://host:port
	user string
	pass string
	hc   *http.Client
}

// newHTTPClient builds the transport: TLS verified with the CA file when given (system roots
// otherwise), verification off only when insecure is set.
func newHTTPClient(caFile string, insecure bool, timeout time.Duration) (*http.Client, error) {
	// The session cache lets the many short connections gofish opens (bmclib v2.3.5 never turns
	// on gofish's connection reuse, so every call is a new connection) resume TLS instead of a
	// full handshake: cheaper for the iDRAC's small CPU and for us.
	tc := &tls.Config{MinVersion: tls.VersionTLS12, ClientSessionCache: tls.NewLRUClientSessionCache(16)}
	if insecure {
		tc.InsecureSkipVerify = true //nolint:gosec // the profile asked for it; preflight and the report warn
	} else if caFile != "" {
		pem, err := fsroot.ReadFile(caFile, fsroot.PEM)
		if err != nil {
			return nil, fmt.Errorf("read bmc.caFile: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("bmc.caFile %s: no PEM certificate in it", caFile)
		}
		tc.RootCAs = pool
	}
	tr := &http.Transport{
		Proxy:               nil, // BMC networks are local; never send credentials through a proxy
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:     tc,
		TLSHandshakeTimeout: 10 * time.Second,
		MaxIdleConnsPerHost: 4,
		IdleConnTimeout:     60 * time.Second,
	}
	// bmclib and gofish share this client: no redirect takes the credentials (Basic, or a
	// session's X-Auth-Token) to another host or from https to http.
	return &http.Client{Transport: tr, Timeout: timeout, CheckRedirect: redirect.SameOrigin}, nil
}

// get decodes the JSON resource at path into out.
func (r *raw) get(ctx context.Context, path string, out any) error {
	return r.do(ctx, http.MethodGet, path, nil, out, nil)
}

// do sends one request with basic auth; a non-2xx answer becomes a *RedfishError, transport
// failures become ErrUnreachable or ErrTLS. hdr, when non-nil, receives the response headers.
func (r *raw) do(ctx context.Context, method, path string, body, out any, hdr *http.Header) error {
	return r.doWith(ctx, method, path, nil, body, out, hdr)
}

// doWith is do with extra request headers (If-Match).
func (r *raw) doWith(ctx context.Context, method, path string, reqHdr http.Header, body, out any, hdr *http.Header) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, r.base+path, rd)
	if err != nil {
		return err
	}
	for k, v := range reqHdr {
		req.Header[k] = v
	}
	req.SetBasicAuth(r.user, r.pass)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := r.hc.Do(req)
	if err != nil {
		return classifyTransport(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(peerbody.Reader(resp.Body, peerLimits, "Redfish "+method+" "+path))
	var le *peerbody.LimitError
	if errors.As(err, &le) {
		return le
	}
	if err != nil {
		return classifyTransport(err)
	}
	if hdr != nil {
		*hdr = resp.Header
	}
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		return fmt.Errorf("%s %s: HTTP %d: %w", method, path, resp.StatusCode, ErrAuth)
	}
	if resp.StatusCode/100 != 2 {
		sc := redact.New()
		sc.AddBasic(r.user, r.pass)
		return parseRedfishError(method, path, resp.StatusCode, data, sc)
	}
	if out != nil && len(data) > 0 {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("%s %s: decode: %w", method, path, err)
		}
	}
	return nil
}

// parseRedfishError reads a Redfish error body: {"error":{"code":..,"message":..,"@Message.ExtendedInfo":[..]}}.
// The message is redacted of the client's own credentials (sc) before it is clipped: a password
// the clip cut in half would no longer be recognised downstream.
func parseRedfishError(method, path string, status int, data []byte, sc *redact.Scrubber) *RedfishError {
	var body struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
			Info    []struct {
				MessageID string `json:"MessageId"`
				Message   string `json:"Message"`
			} `json:"@Message.ExtendedInfo"`
		} `json:"error"`
	}
	e := &RedfishError{Method: method, Path: path, Status: status}
	if json.Unmarshal(data, &body) == nil {
		for _, i := range body.Error.Info {
			e.MessageIDs = append(e.MessageIDs, i.MessageID)
			if e.Message == "" {
				e.Message = i.Message
			}
		}
		if len(e.MessageIDs) == 0 && body.Error.Code != "" {
			e.MessageIDs = append(e.MessageIDs, body.Error.Code)
		}
		if e.Message == "" {
			e.Message = body.Error.Message
		}
	}
	e.Message = sc.ClipString(e.Message, maxPeerMessage)
	return e
}

// peerLimits bound a Redfish answer read by the raw client: a whole resource (the largest real
// ones, Dell's manager Attributes, are about 1 MiB) and any one string in it (ids, names, MACs,
// messages are short; 64 KiB leaves room for a certificate a BMC may show). A BMC answering more
// is refused with the limit named, after reading at most the cap.
var peerLimits = peerbody.Limits{Body: 8 << 20, String: 64 << 10}

// maxPeerMessage bounds the text kept from a BMC's error body: enough for any real Redfish
// message, and a BMC that echoes requests or dumps pages cannot flood the journal and reports.
const maxPeerMessage = 512

// classifyTransport maps a transport error to ErrTLS or ErrUnreachable (context errors pass).
func classifyTransport(err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		var ue *url.Error
		if errors.As(err, &ue) && ue.Timeout() && !errors.Is(err, context.Canceled) {
			return fmt.Errorf("%w: %v", ErrUnreachable, err)
		}
		return err
	}
	var ua x509.UnknownAuthorityError
	var hn x509.HostnameError
	var ci x509.CertificateInvalidError
	var tv *tls.CertificateVerificationError
	if errors.As(err, &ua) || errors.As(err, &hn) || errors.As(err, &ci) || errors.As(err, &tv) {
		return fmt.Errorf("%w: %v", ErrTLS, err)
	}
	return fmt.Errorf("%w: %v", ErrUnreachable, err)
}

// odataID is a Redfish link.
type odataID struct {
	ID string `json:"@odata.id"`
}

// collection is a Redfish resource collection.
type collection struct {
	Members []odataID `json:"Members"`
}
