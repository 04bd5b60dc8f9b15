package handoff

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// sshRepo splits an ssh:// or scp-like Git URL into user, host:port and repository path.
func sshRepo(raw string) (user, addr, path string, err error) {
	if u, perr := url.Parse(raw); perr == nil && u.Scheme == "ssh" {
		port := u.Port()
		if port == "" {
			port = "22"
		}
		return u.User.Username(), net.JoinHostPort(u.Hostname(), port), u.Path, nil
	}
	at, rest, ok := strings.Cut(raw, "@")
	host, p, ok2 := strings.Cut(rest, ":")
	if !ok || !ok2 {
		return "", "", "", fmt.Errorf("handoff: %q is not an ssh:// or user@host:path URL", raw)
	}
	return at, net.JoinHostPort(host, "22"), p, nil
}

// GitRefsSSH reads the refs a Git server advertises over SSH (git-upload-pack), verifying the
// server's host key against the repository's known_hosts and logging in with its private key.
func GitRefsSSH(ctx context.Context, r Repo) (map[string]string, error) {
	user, addr, path, err := sshRepo(r.URL)
	if err != nil {
		return nil, err
	}
	if user == "" {
		user = "git"
	}
	signer, err := ssh.ParsePrivateKey(r.SSHPrivateKey)
	if err != nil {
		return nil, fmt.Errorf("git %s: gitops.credentials.sshKeyFile: %w", addr, err)
	}
	dir, err := os.MkdirTemp("", "bootstrap-known-hosts-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	kh := filepath.Join(dir, "known_hosts")
	if err := os.WriteFile(kh, r.KnownHosts, 0o600); err != nil {
		return nil, err
	}
	cb, err := knownhosts.New(kh)
	if err != nil {
		return nil, fmt.Errorf("git %s: gitops.credentials.knownHostsFile: %w", addr, err)
	}
	cfg := &ssh.ClientConfig{User: user, Auth: []ssh.AuthMethod{ssh.PublicKeys(signer)}, HostKeyCallback: cb, Timeout: 15 * time.Second}
	conn, err := (&net.Dialer{Timeout: 15 * time.Second}).DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("git %s: %w", addr, err)
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	} else {
		_ = conn.SetDeadline(time.Now().Add(time.Minute))
	}
	sc, chans, reqs, err := ssh.NewClientConn(conn, addr, cfg)
	if err != nil {
		return nil, fmt.Errorf("git %s@%s: %w", user, addr, err)
	}
	client := ssh.NewClient(sc, chans, reqs)
	defer client.Close()
	sess, err := client.NewSession()
	if err != nil {
		return nil, fmt.Errorf("git %s: %w", addr, err)
	}
	defer sess.Close()
	stdin, err := sess.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := sess.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := sess.Start("git-upload-pack '" + strings.ReplaceAll(path, "'", `'\''`) + "'"); err != nil {
		return nil, fmt.Errorf("git %s: %w", addr, err)
	}
	refs, err := parseAdvertisement(stdout)
	// A flush tells upload-pack we want nothing; it then exits cleanly.
	_, _ = stdin.Write([]byte("0000"))
	_ = stdin.Close()
	if err != nil {
		return nil, fmt.Errorf("git %s%s: %w", addr, path, err)
	}
	return refs, nil
}
