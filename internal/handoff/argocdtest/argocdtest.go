// Package argocdtest runs Argo CD's own controllers (application-controller, repo-server,
// applicationset-controller, built by scripts/argocd.sh) and the redis they cache in as local
// processes against a kube-apiserver, for the handoff tests and the lab. It stands in for the pods
// the OpenShift GitOps operator runs for the default instance, and for what a kubelet does for
// them: it writes the instance's configuration (Config: argocd-cm and friends, argocd-secret,
// the default AppProject), mounts the ConfigMaps Argo CD reads as files (TLS certificates, SSH
// known hosts, GnuPG keys), restarts a process that exits (with a kubelet's back-off, noted in
// its log and in Restarts), and gives the controllers their in-cluster identity through a
// kubeconfig (ARGOCD_FAKE_IN_CLUSTER is Argo CD's own switch for running outside a pod: it makes
// https://kubernetes.default.svc mean $KUBECONFIG). Everything Argo CD reports (sync, health,
// conditions, operation state) is Argo CD's own.
//
// When the binaries are missing, Start fails and says to run `make argocd`.
package argocdtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"k8s.io/client-go/dynamic"

	"github.com/bootstrap-dev/bootstrap/internal/childproc"
)

// Version is the Argo CD scripts/argocd.sh builds; keep in step with it.
const Version = "v3.6.2"

// Dir is where scripts/argocd.sh leaves the argocd binary (under its argocd-* names) and
// kustomize: $BOOTSTRAP_ARGOCD_ROOT (default /var/cache/bootstrap/argocd)/<Version>.
func Dir() string {
	root := os.Getenv("BOOTSTRAP_ARGOCD_ROOT")
	if root == "" {
		root = "/var/cache/bootstrap/argocd"
	}
	return filepath.Join(root, Version)
}

// RedisServer is Debian's redis-server (scripts/install-deps.sh installs it).
const RedisServer = "/usr/bin/redis-server"

// Missing says what is missing to run Argo CD, or "" when everything is there.
func Missing() string {
	for _, f := range []string{"argocd-application-controller", "argocd-repo-server", "argocd-applicationset-controller", "argocd-git-ask-pass", "kustomize", "git-verify-wrapper.sh"} {
		if _, err := os.Stat(filepath.Join(Dir(), f)); err != nil {
			return fmt.Sprintf("%s not found in %s: run `make argocd` (scripts/argocd.sh builds Argo CD %s and kustomize once)", f, Dir(), Version)
		}
	}
	if _, err := os.Stat(RedisServer); err != nil {
		return "redis-server not found: run `make deps` (Argo CD's controllers cache in redis)"
	}
	return ""
}

// Options say where Argo CD runs.
type Options struct {
	// Dir holds the processes' logs (logs/argocd-*.log) and scratch (repository checkouts,
	// mounted files); it is emptied at Start.
	Dir string
	// Kubeconfig is the file the controllers reach the API server with (as their pod's service
	// account would), also for the in-cluster destination.
	Kubeconfig string
	// Namespace is the instance's namespace (Applications, ApplicationSets, repository Secrets).
	Namespace string
	// Host is the loopback address the processes listen on (default 127.0.0.1).
	Host string
	// RestartBackoff is the delay before the first restart of a process that exited (default
	// 10 s, a kubelet's); it doubles per restart of that process, up to 5 min.
	RestartBackoff time.Duration

	freePort func(host string) (int, error) // tests: picks a port to listen on (default freePort)
}

// Instance is a running Argo CD.
type Instance struct {
	// RepoServer is the repo-server's gRPC address (plaintext).
	RepoServer string

	dir     string
	sockDir string
	stop    context.CancelFunc
	done    chan struct{}

	backoff  time.Duration
	mu       sync.Mutex
	procs    []*childproc.Proc // in start order; a restarted process replaces its entry
	specs    []childproc.Spec
	restarts []string
	started  map[string]int
	quit     chan struct{} // closed by Stop: supervisors restart nothing more
	watchers sync.WaitGroup
}

// Start writes the instance's configuration when missing (Config), starts redis, the
// repo-server, the application-controller and the applicationset-controller, and returns once
// each listens. d is a client of the same API server as o.Kubeconfig.
func Start(ctx context.Context, d dynamic.Interface, o Options) (_ *Instance, err error) {
	if m := Missing(); m != "" {
		return nil, errors.New(m)
	}
	if o.Host == "" {
		o.Host = "127.0.0.1"
	}
	if o.freePort == nil {
		o.freePort = freePort
	}
	if o.RestartBackoff <= 0 {
		o.RestartBackoff = restartBackoff
	}
	a := &Instance{dir: o.Dir, quit: make(chan struct{}), backoff: o.RestartBackoff, started: map[string]int{}}
	defer func() {
		if err != nil {
			err = errors.Join(err, a.Stop())
		}
	}()
	if err := Config(ctx, d, o.Namespace); err != nil {
		return nil, err
	}
	// Checkouts of an earlier start are stale; a restarted repo-server pod has none either.
	for _, sub := range []string{"tmp", "tls", "ssh", "gpg", "gnupg"} {
		if err := os.RemoveAll(filepath.Join(a.dir, sub)); err != nil {
			return nil, err
		}
		if err := os.MkdirAll(filepath.Join(a.dir, sub), 0o700); err != nil {
			return nil, err
		}
	}
	// The askpass socket path must fit a sockaddr_un (108 bytes); test dirs may be deep.
	if a.sockDir, err = os.MkdirTemp("", "argo-"); err != nil {
		return nil, err
	}
	hp := func(p int) string { return net.JoinHostPort(o.Host, strconv.Itoa(p)) }

	mctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	m := &mounter{d: d, ns: o.Namespace, dir: a.dir, written: map[string]string{}}
	a.stop, a.done = cancel, make(chan struct{})
	if err := m.once(mctx); err != nil {
		close(a.done)
		return nil, err
	}
	go m.run(mctx, a.done)

	env := append(os.Environ(),
		"PATH="+Dir()+string(os.PathListSeparator)+os.Getenv("PATH"), // kustomize, argocd-git-ask-pass
		"TMPDIR="+filepath.Join(a.dir, "tmp"),
		"KUBECONFIG="+o.Kubeconfig,
		"ARGOCD_FAKE_IN_CLUSTER=true",
		"ARGOCD_TLS_DATA_PATH="+filepath.Join(a.dir, "tls"),
		"ARGOCD_SSH_DATA_PATH="+filepath.Join(a.dir, "ssh"),
		"ARGOCD_GPG_DATA_PATH="+filepath.Join(a.dir, "gpg", "source"),
		"ARGOCD_GNUPGHOME="+filepath.Join(a.dir, "gnupg"),
		"ARGOCD_GPG_ENABLED=false",
		"ARGOCD_ASK_PASS_SOCK="+filepath.Join(a.sockDir, "askpass.sock"),
	)
	bin := func(name string) string { return filepath.Join(Dir(), name) }
	// Each process's own ports are picked just before it starts, and again when it finds one
	// taken (a free port is only free until someone else binds it: on a busy machine an outgoing
	// connection's ephemeral port, or another lab's server, can win the race; the
	// application-controller's metrics listen on every address). Later processes are given the
	// addresses the earlier ones ended up with.
	var redis, repo int
	for _, s := range []struct {
		name  string
		ports int // how many ports of its own it listens on
		spec  func(own []int) (addr string, argv []string)
	}{
		{"argocd-redis", 1, func(own []int) (string, []string) {
			redis = own[0]
			return hp(redis), []string{RedisServer, "--bind", o.Host, "--port", strconv.Itoa(redis),
				"--save", "", "--appendonly", "no", "--protected-mode", "no", "--dir", a.dir}
		}},
		{"argocd-repo-server", 2, func(own []int) (string, []string) {
			repo = own[0]
			return hp(repo), []string{bin("argocd-repo-server"), "--address", o.Host, "--port", strconv.Itoa(repo),
				"--metrics-address", o.Host, "--metrics-port", strconv.Itoa(own[1]),
				"--disable-tls", "--client-ca-path", "", "--redis", hp(redis), "--loglevel", "info"}
		}},
		{"argocd-application-controller", 1, func(own []int) (string, []string) {
			return hp(own[0]), []string{bin("argocd-application-controller"), "--namespace", o.Namespace,
				"--repo-server", hp(repo), "--repo-server-plaintext", "--redis", hp(redis),
				"--metrics-port", strconv.Itoa(own[0]), "--loglevel", "info",
				// Each resource's health and message in the Application's status (not only in
				// redis, where only argocd-server, which does not run here, would serve it).
				"--persist-resource-health"}
		}},
		{"argocd-applicationset-controller", 3, func(own []int) (string, []string) {
			return hp(own[1]), []string{bin("argocd-applicationset-controller"), "--namespace", o.Namespace,
				"--argocd-repo-server", hp(repo), "--repo-server-plaintext",
				"--metrics-addr", hp(own[0]), "--probe-addr", hp(own[1]), "--webhook-addr", hp(own[2]), "--loglevel", "info"}
		}},
	} {
		var p *childproc.Proc
		var spec childproc.Spec
		for attempt := 1; ; attempt++ {
			own := make([]int, s.ports)
			for i := range own {
				if own[i], err = o.freePort(o.Host); err != nil {
					return nil, fmt.Errorf("argo cd: free port: %w", err)
				}
			}
			addr, argv := s.spec(own)
			spec = childproc.Spec{Name: s.name, LogDir: filepath.Join(a.dir, "logs"), Addr: addr,
				Argv: argv, Env: env, Wait: startTimeout, DieWithParent: true}
			if p, err = childproc.Start(ctx, spec); err == nil {
				break
			}
			if attempt == portAttempts || !portTaken(err) {
				return nil, fmt.Errorf("argo cd: %w", err)
			}
			appendLine(filepath.Join(spec.LogDir, spec.Name+".log"), fmt.Sprintf("argocdtest: a port was taken (attempt %d of %d); starting again on other ports", attempt, portAttempts))
		}
		a.mu.Lock()
		a.procs, a.specs = append(a.procs, p), append(a.specs, spec)
		a.started[spec.Name]++
		a.mu.Unlock()
	}
	a.RepoServer = hp(repo)
	for i := range a.procs {
		a.watchers.Add(1)
		go a.supervise(mctx, i)
	}
	return a, nil
}

// supervise restarts process i whenever it exits before Stop, with the back-off a kubelet gives
// a crashing container (10 s, doubled per restart, at most 5 min): a controller that gives up
// (controller-runtime exits when its caches do not sync in time on a loaded machine) comes
// back as its pod would. Each restart is noted in the process's log and in Restarts.
func (a *Instance) supervise(ctx context.Context, i int) {
	defer a.watchers.Done()
	since := time.Now() // when process i last started
	for n := 0; ; n++ {
		a.mu.Lock()
		p, spec := a.procs[i], a.specs[i]
		a.mu.Unlock()
		select {
		case <-a.quit:
			return
		case <-p.Done():
		}
		if time.Since(since) >= resetBackoffAfter {
			n = 0 // a kubelet forgets the back-off of a container that ran long enough
		}
		backoff := min(a.backoff<<n, maxRestartBackoff)
		note := fmt.Sprintf("%s %s exited (%v); restart %d in %s, as a kubelet restarts a crashed container; the log before the exit: %s",
			time.Now().UTC().Format(time.RFC3339), spec.Name, p.Err(), n+1, backoff, p.Tail())
		appendLine(p.Log(), "argocdtest: "+note)
		a.mu.Lock()
		a.restarts = append(a.restarts, note)
		a.mu.Unlock()
		select {
		case <-a.quit:
			return
		case <-time.After(backoff):
		}
		for {
			np, err := childproc.Start(ctx, spec)
			if err == nil {
				a.mu.Lock()
				a.procs[i] = np
				a.started[spec.Name]++
				a.mu.Unlock()
				since = time.Now()
				break
			}
			appendLine(p.Log(), "argocdtest: restart failed: "+err.Error())
			n++
			select {
			case <-a.quit:
				return
			case <-time.After(min(a.backoff<<n, maxRestartBackoff)):
			}
		}
	}
}

// Restarts describes each restart of a process that exited while the instance ran (empty when
// none did).
func (a *Instance) Restarts() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.restarts...)
}

// Started is how many times the named process has started and listened (1 plus its restarts).
func (a *Instance) Started(name string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.started[name]
}

// Kill sends SIGKILL to the named process ("argocd-application-controller"), as a node's
// out-of-memory killer or a crash would end it; the supervisor restarts it.
func (a *Instance) Kill(name string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	for i, s := range a.specs {
		if s.Name == name {
			return a.procs[i].Signal(syscall.SIGKILL)
		}
	}
	return fmt.Errorf("argo cd: no process %s", name)
}

// The back-off of restarts: a kubelet's CrashLoopBackOff starts at 10 s, caps at 5 min, and
// starts over for a container that ran 10 min.
const (
	restartBackoff    = 10 * time.Second
	maxRestartBackoff = 5 * time.Minute
	resetBackoffAfter = 10 * time.Minute
)

func appendLine(file, line string) {
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = fmt.Fprintln(f, line)
}

// Stop stops the processes in reverse order and the mounts; it may be called more than once.
func (a *Instance) Stop() error {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	select {
	case <-a.quit:
	default:
		close(a.quit)
	}
	a.mu.Unlock()
	if a.stop != nil {
		a.stop() // the mounts, and a restart under way
	}
	a.watchers.Wait()
	var errs []error
	for i := len(a.procs) - 1; i >= 0; i-- {
		errs = append(errs, a.procs[i].Stop())
	}
	a.procs = nil
	if a.stop != nil {
		<-a.done
		a.stop = nil
	}
	if a.sockDir != "" {
		errs = append(errs, os.RemoveAll(a.sockDir))
		a.sockDir = ""
	}
	return errors.Join(errs...)
}

// Logs is the log file of one process ("argocd-repo-server").
func (a *Instance) Logs(name string) string { return filepath.Join(a.dir, "logs", name+".log") }

// portAttempts is how many sets of ports a process is started on before its start fails.
const portAttempts = 3

// portTaken reports whether a start failed because a port was bound first by someone else (Go's
// "bind: address already in use", redis's "Address already in use", in the log the error quotes).
func portTaken(err error) bool {
	return strings.Contains(strings.ToLower(err.Error()), "address already in use")
}

func freePort(host string) (int, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// startTimeout bounds a process's start: the application-controller loads a 160 MB binary and
// lists the API server's resources on a shared machine.
const startTimeout = 3 * time.Minute
