package gather

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/bootstrap-dev/bootstrap/internal/fsroot"
)

// HostKeyChangedError is returned when a host presents a key other than the one recorded on first
// contact: a reinstalled node, or someone in the middle. The connection is refused.
type HostKeyChangedError struct {
	Host        string
	Got         string // SHA256 fingerprint presented
	Want        []string
	KnownHosts  string
	KnownHostLn int
}

func (e *HostKeyChangedError) Error() string {
	return fmt.Sprintf("host key of %s changed: presented %s, recorded %v in %s:%d; if the node was reinstalled, delete that line and retry",
		e.Host, e.Got, e.Want, e.KnownHosts, e.KnownHostLn)
}

// HostKeys is a known_hosts file that learns a host's key on first contact (trust on first use)
// and verifies it afterwards. Safe for concurrent use.
type HostKeys struct {
	path string
	mu   sync.Mutex
}

// NewHostKeys uses the known_hosts file at path (created on first contact, mode 0600).
func NewHostKeys(path string) *HostKeys { return &HostKeys{path: path} }

// Path is the known_hosts file.
func (h *HostKeys) Path() string { return h.path }

// Callback verifies a host key against the file, recording it when the host is new.
func (h *HostKeys) Callback() ssh.HostKeyCallback {
	return func(hostname string, remote net.Addr, key ssh.PublicKey) error {
		h.mu.Lock()
		defer h.mu.Unlock()
		if _, err := os.Stat(h.path); err == nil {
			cb, err := knownhosts.New(h.path)
			if err != nil {
				return fmt.Errorf("known hosts %s: %w", h.path, err)
			}
			err = cb(hostname, remote, key)
			var ke *knownhosts.KeyError
			switch {
			case err == nil:
				return nil
			case errors.As(err, &ke) && len(ke.Want) > 0:
				e := &HostKeyChangedError{Host: hostname, Got: ssh.FingerprintSHA256(key), KnownHosts: h.path, KnownHostLn: ke.Want[0].Line}
				for _, w := range ke.Want {
					e.Want = append(e.Want, ssh.FingerprintSHA256(w.Key))
				}
				return e
			case errors.As(err, &ke):
				// Unknown host: record below.
			default:
				return err
			}
		}
		if err := os.MkdirAll(filepath.Dir(h.path), 0o700); err != nil {
			return fmt.Errorf("known hosts: %w", err)
		}
		f, err := os.OpenFile(h.path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		if err != nil {
			return fmt.Errorf("known hosts: %w", err)
		}
		line := knownhosts.Line([]string{knownhosts.Normalize(hostname)}, key) + "\n"
		if _, err := f.WriteString(line); err != nil {
			f.Close()
			return fmt.Errorf("known hosts: %w", err)
		}
		if err := f.Sync(); err != nil {
			f.Close()
			return fmt.Errorf("known hosts: %w", err)
		}
		return f.Close()
	}
}

// Algorithms returns the host key algorithms to ask a known host for, so a host with several keys
// presents the recorded one; nil for an unknown host (any algorithm, recorded on first contact).
func (h *HostKeys) Algorithms(hostport string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	f, err := fsroot.OpenFile(h.path, fsroot.PEM)
	if err != nil {
		return nil
	}
	defer f.Close()
	want := knownhosts.Normalize(hostport)
	var algs []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		_, hosts, key, _, _, err := ssh.ParseKnownHosts(sc.Bytes())
		if err != nil {
			continue
		}
		for _, hh := range hosts {
			if hh != want {
				continue
			}
			switch t := key.Type(); t {
			case ssh.KeyAlgoRSA:
				algs = append(algs, ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256, ssh.KeyAlgoRSA)
			default:
				algs = append(algs, t)
			}
		}
	}
	return algs
}
