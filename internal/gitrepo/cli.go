package gitrepo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/childproc"
)

// cli runs git with a private configuration: HOME, the global config and everything it points
// at live in a 0700 temporary directory; the system config, the caller's GIT_* variables, SSH
// agent and askpass programs are not used, and git never prompts.
type cli struct {
	dir     string
	repo    string // the bare repository fetched into
	env     []string
	secrets []string // redacted from git's messages
	url     string
}

// newCLI writes the private configuration for r: the CA as http.sslCAInfo, HTTPS credentials
// in a git-credential-store file, the SSH key and known_hosts for core.sshCommand.
func newCLI(r Repo) (*cli, error) {
	if _, err := exec.LookPath("git"); err != nil {
		return nil, fmt.Errorf("git is not installed on the jump host (apt-get install git): %w", err)
	}
	dir, err := privateDir(privateRoot(r.Dir))
	if err != nil {
		return nil, fmt.Errorf("git: private folder: %w", err)
	}
	g := &cli{dir: dir, repo: filepath.Join(dir, "repo.git"), url: r.URL}
	ok := false
	defer func() {
		if !ok {
			g.close()
		}
	}()
	write := func(name string, b []byte) (string, error) {
		p := filepath.Join(dir, name)
		return p, os.WriteFile(p, b, 0o600)
	}
	// lowSpeed*: git-remote-https gives up on a server that stops sending, on its own too.
	cfg := "[protocol]\n\tversion = 2\n[init]\n\tdefaultBranch = main\n[http]\n\tsslVerify = true\n\tlowSpeedLimit = 1\n\tlowSpeedTime = 60\n"
	if len(r.CA) > 0 {
		p, err := write("ca.pem", r.CA)
		if err != nil {
			return nil, err
		}
		cfg += "\tsslCAInfo = " + quote(p) + "\n"
	}
	// An empty helper first resets any helper list; then only our store file answers.
	cfg += "[credential]\n\thelper =\n"
	if r.Password != "" || r.Username != "" {
		u, err := url.Parse(r.URL)
		if err != nil || u.Host == "" {
			return nil, &Error{Step: StepRepository, Msg: fmt.Sprintf("%q is not an https:// URL", r.URL), Fix: "correct gitops.repoURL"}
		}
		line := (&url.URL{Scheme: u.Scheme, Host: u.Host, User: url.UserPassword(r.Username, r.Password)}).String() + "\n"
		p, err := write("credentials", []byte(line))
		if err != nil {
			return nil, err
		}
		cfg += "\thelper = " + quote("store --file="+shellQuote(p)) + "\n"
		g.secrets = append(g.secrets, r.Password, url.QueryEscape(r.Password), url.PathEscape(r.Password))
	}
	ssh := []string{"ssh", "-F", "/dev/null", "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes",
		"-o", "GlobalKnownHostsFile=/dev/null", "-o", "ConnectTimeout=15"}
	kh, err := write("known_hosts", r.KnownHosts)
	if err != nil {
		return nil, err
	}
	ssh = append(ssh, "-o", "UserKnownHostsFile="+kh)
	if len(r.SSHKey) > 0 {
		key := r.SSHKey
		if !bytes.HasSuffix(key, []byte("\n")) {
			key = append(append([]byte(nil), key...), '\n')
		}
		p, err := write("id", key)
		if err != nil {
			return nil, err
		}
		ssh = append(ssh, "-o", "IdentitiesOnly=yes", "-o", "IdentityAgent=none", "-i", p)
	}
	for i := range ssh {
		ssh[i] = shellQuote(ssh[i])
	}
	cfg += "[core]\n\tsshCommand = " + quote(strings.Join(ssh, " ")) + "\n"
	gc, err := write("gitconfig", []byte(cfg))
	if err != nil {
		return nil, err
	}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(k, "GIT_"), k == "HOME", k == "XDG_CONFIG_HOME", k == "SSH_AUTH_SOCK",
			k == "SSH_ASKPASS", k == "LC_ALL", k == "LANG", k == "LANGUAGE":
			continue
		}
		g.env = append(g.env, kv)
	}
	g.env = append(g.env, "HOME="+dir, "XDG_CONFIG_HOME="+dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+gc,
		"GIT_TERMINAL_PROMPT=0", "GIT_LITERAL_PATHSPECS=1", "LC_ALL=C", "LANG=C")
	ok = true
	return g, nil
}

func (g *cli) close() { removeAll(g.dir) }

// cmdError is a failed git command with its (redacted) standard error.
type cmdError struct {
	args   string
	stderr string
	err    error
}

func (e *cmdError) Error() string {
	msg := lastLines(e.stderr)
	if msg == "" {
		msg = e.err.Error()
	}
	return "git " + e.args + ": " + msg
}

func (e *cmdError) Unwrap() error { return e.err }

// run runs git; argv never holds a secret (they are in the config's files).
func (g *cli) run(ctx context.Context, args ...string) (string, error) {
	cmd := groupCommand(ctx, "git", args...)
	cmd.Dir = g.dir
	cmd.Env = g.env
	// ssh, a grandchild, may hold the pipes after git is killed.
	cmd.WaitDelay = 2 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	_ = childproc.KillGroup(cmd) // whatever git started and left behind
	if err != nil {
		name := args[0]
		if name == "--git-dir" && len(args) > 2 {
			name = args[2]
		}
		return stdout.String(), &cmdError{args: name, stderr: g.redact(stderr.String()), err: err}
	}
	return stdout.String(), nil
}

func (g *cli) redact(s string) string {
	s = strings.ReplaceAll(s, filepath.Join(g.dir, "ca.pem"), "gitops.caFile")
	for _, v := range g.secrets {
		if v != "" {
			s = strings.ReplaceAll(s, v, "***")
		}
	}
	return s
}

// lastLines keeps git's fatal/error lines (or the last line), without hints and warnings.
func lastLines(stderr string) string {
	var keep []string
	last := ""
	for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		last = l
		if strings.HasPrefix(l, "fatal: ") || strings.HasPrefix(l, "error: ") || strings.Contains(l, "Permission denied") ||
			strings.Contains(l, "Host key verification failed") || strings.Contains(l, "IDENTIFICATION HAS CHANGED") ||
			strings.Contains(l, "No such file") {
			keep = append(keep, l)
		}
	}
	if len(keep) == 0 {
		return last
	}
	return strings.Join(keep, "; ")
}

// remoteError turns a failed ls-remote or fetch into an *Error that says what to fix.
func (g *cli) remoteError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return &Error{Step: StepRepository, Msg: fmt.Sprintf("%s did not answer in time: %v", g.url, ctx.Err()),
			Fix: "check that the jump host reaches the Git server (host, port, firewall, proxy)"}
	}
	var ce *cmdError
	if !errors.As(err, &ce) {
		return &Error{Step: StepRepository, Msg: fmt.Sprintf("%s: %v", g.url, err), Fix: "check gitops.repoURL"}
	}
	s := ce.stderr
	detail := lastLines(s)
	has := func(subs ...string) bool {
		for _, sub := range subs {
			if strings.Contains(s, sub) {
				return true
			}
		}
		return false
	}
	e := &Error{Step: StepRepository}
	switch {
	case has("SSL certificate problem", "server certificate verification failed", "certificate verify failed",
		"unable to get local issuer certificate", "self-signed certificate", "self signed certificate"):
		e.Msg = fmt.Sprintf("the TLS certificate of %s is not trusted: %s", g.url, detail)
		e.Fix = "set gitops.caFile to the PEM CA that signed the Git server's certificate"
	case has("REMOTE HOST IDENTIFICATION HAS CHANGED"):
		e.Msg = fmt.Sprintf("the SSH host key of %s has changed since gitops.credentials.knownHostsFile was written: %s", g.url, detail)
		e.Fix = "compare the server's fingerprint out of band; only if the change is expected, replace its line in knownHostsFile"
	case has("Host key verification failed", "No ED25519 host key is known", "No RSA host key is known", "No ECDSA host key is known"):
		e.Msg = fmt.Sprintf("the SSH host key of %s is not in gitops.credentials.knownHostsFile: %s", g.url, detail)
		e.Fix = "add the server's key (ssh-keyscan -p PORT HOST, fingerprint compared out of band) to knownHostsFile"
	case has("Permission denied (publickey"):
		e.Msg = fmt.Sprintf("%s refused the SSH key: %s", g.url, detail)
		e.Fix = "add the public half of gitops.credentials.sshKeyFile to the repository as a deploy key"
	case has("could not read Username", "could not read Password"):
		e.Msg = fmt.Sprintf("%s asks for credentials and the profile has none", g.url)
		e.Fix = "set gitops.credentials.username and gitops.credentials.password (a read-only token)"
	case has("Authentication failed", "The requested URL returned error: 401", "The requested URL returned error: 403"):
		e.Msg = fmt.Sprintf("%s refused the credentials: %s", g.url, detail)
		e.Fix = "check gitops.credentials.username and the password or token gitops.credentials.password refers to (it needs read access)"
	case has("not found", "does not appear to be a git repository", "returned error: 404", "No such file or directory"):
		e.Msg = fmt.Sprintf("there is no repository at %s: %s", g.url, detail)
		e.Fix = "correct the repository path in gitops.repoURL"
	case has("Could not resolve host", "Could not resolve hostname", "Connection refused", "Failed to connect",
		"Connection timed out", "No route to host", "Network is unreachable", "Couldn't connect"):
		e.Msg = fmt.Sprintf("cannot reach %s: %s", g.url, detail)
		e.Fix = "check gitops.repoURL's host and port, DNS, and the firewall between the jump host and the Git server"
	default:
		e.Msg = fmt.Sprintf("%s: %s", g.url, ce.Error())
		e.Fix = "check gitops.repoURL, gitops.caFile and gitops.credentials"
	}
	return e
}

// quote writes a git config value in double quotes.
func quote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// shellQuote quotes one word for the shell git runs core.sshCommand and credential helpers with.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,@+") == "" {
		return s
	}
	return `'` + strings.ReplaceAll(s, `'`, `'\''`) + `'`
}
