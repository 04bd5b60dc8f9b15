package gather

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/bootstrap-dev/bootstrap/internal/fsroot"
)

// Dialer opens verified SSH connections to the nodes.
type Dialer struct {
	// User is the login (core on RHCOS).
	User   string
	Signer ssh.Signer
	Keys   *HostKeys
	// Port is used when an address has none (default 22).
	Port int
	// Timeout bounds the TCP connect and handshake (default 15 s).
	Timeout time.Duration
}

// LoadSigner reads an unencrypted private key file (the profile's sshKeyFile without .pub).
func LoadSigner(path string) (ssh.Signer, error) {
	b, err := fsroot.ReadFile(path, fsroot.PEM)
	if err != nil {
		return nil, fmt.Errorf("ssh key: %w", err)
	}
	s, err := ssh.ParsePrivateKey(b)
	var pm *ssh.PassphraseMissingError
	if errors.As(err, &pm) {
		return nil, fmt.Errorf("ssh key %s is protected by a passphrase: use a key without one for the install user", path)
	}
	if err != nil {
		return nil, fmt.Errorf("ssh key %s: %w", path, err)
	}
	return s, nil
}

// Client is one verified SSH connection.
type Client struct {
	addr string
	c    *ssh.Client
}

// Dial connects to address (host or host:port), verifying the host key.
func (d *Dialer) Dial(ctx context.Context, address string) (*Client, error) {
	if d.Signer == nil || d.Keys == nil || d.User == "" {
		return nil, errors.New("ssh: dialer needs a user, a key and a known_hosts store")
	}
	addr := address
	if _, _, err := net.SplitHostPort(address); err != nil {
		port := d.Port
		if port == 0 {
			port = 22
		}
		addr = net.JoinHostPort(address, strconv.Itoa(port))
	}
	timeout := d.Timeout
	if timeout == 0 {
		timeout = 15 * time.Second
	}
	cfg := &ssh.ClientConfig{
		User:              d.User,
		Auth:              []ssh.AuthMethod{ssh.PublicKeys(d.Signer)},
		HostKeyCallback:   d.Keys.Callback(),
		HostKeyAlgorithms: d.Keys.Algorithms(addr),
		Timeout:           timeout,
	}
	dctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn, err := (&net.Dialer{}).DialContext(dctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("ssh %s: %w", addr, err)
	}
	if dl, ok := dctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	sc, chans, reqs, err := ssh.NewClientConn(conn, addr, cfg)
	if err != nil {
		conn.Close()
		var hk *HostKeyChangedError
		if errors.As(err, &hk) {
			return nil, hk
		}
		return nil, fmt.Errorf("ssh %s@%s: %w", d.User, addr, err)
	}
	_ = conn.SetDeadline(time.Time{})
	return &Client{addr: addr, c: ssh.NewClient(sc, chans, reqs)}, nil
}

// Close closes the connection.
func (c *Client) Close() error { return c.c.Close() }

// ExitError is a remote command that ran and exited non-zero.
type ExitError struct {
	Cmd    string
	Status int
	Stderr string
}

func (e *ExitError) Error() string {
	msg := fmt.Sprintf("%q exited %d", e.Cmd, e.Status)
	if s := strings.TrimSpace(e.Stderr); s != "" {
		msg += ": " + s
	}
	return msg
}

// Run runs cmd, copying its standard output to stdout. Cancelling ctx closes the session.
func (c *Client) Run(ctx context.Context, cmd string, stdout io.Writer) error {
	s, err := c.c.NewSession()
	if err != nil {
		return fmt.Errorf("ssh %s: session: %w", c.addr, err)
	}
	defer s.Close()
	var stderr limited
	stderr.max = 64 << 10
	s.Stdout, s.Stderr = stdout, &stderr
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			s.Close()
		case <-done:
		}
	}()
	err = s.Run(cmd)
	close(done)
	var ee *ssh.ExitError
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return fmt.Errorf("ssh %s: %q: %w", c.addr, cmd, ctx.Err())
	case errors.As(err, &ee):
		return &ExitError{Cmd: cmd, Status: ee.ExitStatus(), Stderr: stderr.String()}
	default:
		return fmt.Errorf("ssh %s: %q: %w", c.addr, cmd, err)
	}
}

type limited struct {
	bytes.Buffer
	max int
}

func (l *limited) Write(p []byte) (int, error) {
	if room := l.max - l.Len(); room > 0 {
		if len(p) > room {
			l.Buffer.Write(p[:room])
		} else {
			l.Buffer.Write(p)
		}
	}
	return len(p), nil
}

// ModuleLoaded runs lsmod on the node at address and reports whether module is loaded. It
// implements cluster.ModuleProber.
func (d *Dialer) ModuleLoaded(ctx context.Context, node, address, module string) (bool, error) {
	c, err := d.Dial(ctx, address)
	if err != nil {
		return false, err
	}
	defer c.Close()
	var out bytes.Buffer
	if err := c.Run(ctx, "lsmod", &out); err != nil {
		return false, fmt.Errorf("node %s: %w", node, err)
	}
	return lsmodHas(out.Bytes(), module), nil
}

// lsmodHas reads lsmod output ("Module Size Used by" then one module a line).
func lsmodHas(out []byte, module string) bool {
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) > 0 && f[0] == module {
			return true
		}
	}
	return false
}
