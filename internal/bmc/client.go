package bmc

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	bmclib "github.com/bmc-toolbox/bmclib/v2"

	"github.com/bootstrap-dev/bootstrap/internal/poll"
)

// Target is one node's BMC as the profile describes it.
type Target struct {
	// Node is the node's name in the site profile; every error and finding carries it.
	Node string
	// Address is "https://10.0.0.11" or "https://host:port" (https is assumed without a scheme),
	// or, on a service that manages several systems, the node's own System:
	// "https://host:port/redfish/v1/Systems/<id>" (the Metal3/Ironic address scheme).
	Address string
	// BootMAC is the MAC the node boots from; on a service with several systems and none
	// chosen, the refusal names the system that reports it.
	BootMAC string
	// Vendor is bmc.vendor, a checked hint (see vendorMismatch); "" none.
	Vendor string
	// Username and Password authenticate. Password is called at the moment of use and its value
	// is held only for the life of one connection; it is never logged or returned.
	Username string
	Password func() (string, error)
	CAFile   string // PEM bundle that signed the BMC's certificate; empty: system roots
	Insecure bool   // skip TLS verification (reported as a warning)
}

// Client is an open connection to one BMC: a bmclib client (gofish provider, one Redfish
// session or basic auth when the session table is full) for writes, and a basic-auth raw client
// for reads and Dell OEM actions. Close it when done.
type Client struct {
	node      string
	raw       *raw
	bc        *bmclib.Client
	basicAuth bool
	root      serviceRoot
	cfg       config
	// sysPath is the System every action goes to: the one the address names, or the only one.
	sysPath string
	// multi: the service lists several systems. bmclib v2.3.5 picks a system by Name (or the
	// only one), so on such a service every write goes through the raw client to sysPath.
	multi bool
}

type serviceRoot struct {
	RedfishVersion string  `json:"RedfishVersion"`
	SessionService odataID `json:"SessionService"`
	Systems        odataID `json:"Systems"`
	Managers       odataID `json:"Managers"`
}

// BasicAuth reports whether the connection fell back to basic auth because no session was free.
func (c *Client) BasicAuth() bool { return c.basicAuth }

// Node is the node's name.
func (c *Client) Node() string { return c.node }

// Connect opens a connection: the service root (reachability, TLS), a read with the credentials
// (ErrAuth when refused), then a bmclib Redfish session, falling back to basic auth when the BMC
// has no free session (iDRAC RAC0218).
func Connect(ctx context.Context, t Target, opts ...Option) (*Client, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	c, err := dial(ctx, t, cfg)
	if err != nil {
		return nil, err
	}
	if err := c.openBMCLib(ctx, t); err != nil {
		c.raw.hc.CloseIdleConnections()
		return nil, newError(t.Node, "connect", err)
	}
	return c, nil
}

// dial builds the raw client and checks reachability and credentials, read-only.
func dial(ctx context.Context, t Target, cfg config) (*Client, error) {
	fail := func(err error) (*Client, error) {
		var be *Error
		if errors.As(err, &be) {
			return nil, be
		}
		return nil, newError(t.Node, "connect", err)
	}
	base, err := baseURL(t.Address)
	if err != nil {
		return fail(err)
	}
	if strings.HasPrefix(base, "http://") && !t.Insecure {
		return fail(fmt.Errorf("bmc.address %s is plain HTTP: the credentials would cross the network in clear; use https (or bmc.insecure: true on an isolated lab)", t.Address))
	}
	hc, err := newHTTPClient(t.CAFile, t.Insecure, cfg.callTimeout)
	if err != nil {
		return fail(err)
	}
	if os.Getenv("DEBUG_BMCLIB") == "true" {
		// bmclib v2.3.5 then has gofish dump every request, credentials included, to stdout.
		return fail(errors.New("DEBUG_BMCLIB=true would print BMC credentials; unset it"))
	}
	if t.Password == nil {
		return fail(errors.New("no password source for this BMC"))
	}
	pass, err := t.Password()
	if err != nil {
		return fail(fmt.Errorf("read BMC password: %w", err))
	}
	c := &Client{node: t.Node, cfg: cfg, raw: &raw{base: base, user: t.Username, pass: pass, hc: hc}}
	err = retry(ctx, cfg, func() error { return c.raw.get(ctx, "/redfish/v1/", &c.root) })
	if err != nil {
		return fail(err)
	}
	if c.root.Systems.ID == "" {
		c.root.Systems.ID = "/redfish/v1/Systems"
	}
	if c.root.Managers.ID == "" {
		c.root.Managers.ID = "/redfish/v1/Managers"
	}
	want, err := systemPathOf(t.Address)
	if err != nil {
		return fail(err)
	}
	if err := c.selectSystem(ctx, want, t.BootMAC); err != nil {
		return fail(err)
	}
	return c, nil
}

// openBMCLib opens bmclib restricted to its gofish provider, over our TLS-verifying transport.
func (c *Client) openBMCLib(ctx context.Context, t Target) error {
	u, _ := url.Parse(c.raw.base)
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	host := u.Scheme + "://" + u.Hostname()
	open := func(basic bool) (*bmclib.Client, error) {
		bc := bmclib.NewClient(host, c.raw.user, c.raw.pass,
			bmclib.WithHTTPClient(c.raw.hc),
			bmclib.WithRedfishPort(port),
			bmclib.WithRedfishUseBasicAuth(basic),
			bmclib.WithPerProviderTimeout(c.cfg.callTimeout),
		)
		bc.Registry.Drivers = bc.Registry.For("gofish")
		octx, cancel := context.WithTimeout(ctx, c.cfg.callTimeout)
		defer cancel()
		if err := bc.Open(octx); err != nil {
			return nil, err
		}
		return bc, nil
	}
	if c.root.SessionService.ID == "" {
		// No SessionService (sushy-tools, some embedded BMCs): basic auth is the only way.
		bc, err := open(true)
		if err != nil {
			return fmt.Errorf("open Redfish connection (basic auth): %w", err)
		}
		c.bc, c.basicAuth = bc, true
		return nil
	}
	bc, err := open(false)
	if err != nil {
		// Credentials were accepted by a basic-auth read in dial, so a failed session login is
		// the session table (iDRAC9 allows 8 Redfish sessions; RAC0218) or a BMC with sessions
		// disabled: fall back to basic auth, which takes no session.
		bc, err = open(true)
		if err != nil {
			return fmt.Errorf("open Redfish connection: %w", err)
		}
		c.basicAuth = true
	}
	c.bc = bc
	return nil
}

// Close ends the Redfish session (even when ctx is done) and drops idle connections.
func (c *Client) Close(ctx context.Context) error {
	var err error
	if c.bc != nil {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.cfg.callTimeout)
		defer cancel()
		err = c.bc.Close(cctx)
	}
	c.raw.hc.CloseIdleConnections()
	return err
}

func baseURL(addr string) (string, error) {
	if addr == "" {
		return "", errors.New("bmc.address is empty")
	}
	if !strings.Contains(addr, "://") {
		addr = "https://" + addr
	}
	u, err := url.Parse(addr)
	if err != nil {
		return "", fmt.Errorf("bmc.address %q: %w", addr, err)
	}
	if u.Scheme != "https" && u.Scheme != "http" {
		return "", fmt.Errorf("bmc.address %q: scheme must be https", addr)
	}
	return u.Scheme + "://" + u.Host, nil
}

// retry runs f until it succeeds, fails permanently, or the attempts run out, backing off
// exponentially from cfg.backoff between transient failures (poll.Retry).
func retry(ctx context.Context, cfg config, f func() error) error {
	return poll.Retry(ctx, poll.Backoff{Tries: cfg.attempts, Initial: cfg.backoff}, temporary, func(context.Context) error { return f() })
}

// every is the client's polling policy with the given timeout.
func (c *Client) every(timeout time.Duration) poll.Every {
	return poll.Every{Interval: c.cfg.poll, Timeout: timeout}
}
