package harness

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/bootstrap-dev/bootstrap/internal/childproc"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// SSHD is a real OpenSSH server on every node address of the plan (port 22 when free), standing in for the nodes'
// sshd (gather, the irdma check). It accepts the profile's cluster key (cluster.sshKeyFile) for
// the user running the lab, with a host key kept in <lab>/sshd; <lab>/sshd/known_hosts holds the
// line a client that verifies host keys expects.
type SSHD struct {
	p       *childproc.Proc
	addr    string
	nodeDir string
	// KnownHosts is the known_hosts file for this server; set by Start.
	KnownHosts string
}

// Name implements Component.
func (*SSHD) Name() string { return "sshd" }

// Start implements Component.
func (d *SSHD) Start(ctx context.Context, l *Lab) error {
	dir := filepath.Join(l.Dir, "sshd")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	hostKey := filepath.Join(dir, "ssh_host_ed25519_key")
	if _, err := os.Stat(hostKey); errors.Is(err, fs.ErrNotExist) {
		if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "lab-node", "-f", hostKey).CombinedOutput(); err != nil {
			return fmt.Errorf("ssh-keygen: %v: %s", err, out)
		}
	}
	// sshd refuses to start without its privilege separation directory (Debian creates it in
	// the service unit, which the lab does not use).
	_ = os.MkdirAll("/run/sshd", 0o755)
	port, err := sshPort(l)
	if err != nil {
		return err
	}
	if err := ensureCoreUser(); err != nil {
		return err
	}
	nodeDir, nodeShell, err := writeNodeBin()
	if err != nil {
		return err
	}
	d.nodeDir = nodeDir
	d.addr = net.JoinHostPort(l.IP(21).String(), strconv.Itoa(port))
	var listen []string
	for _, ip := range nodeIPs(l) {
		listen = append(listen, "ListenAddress "+net.JoinHostPort(ip, strconv.Itoa(port)))
	}
	cfg := strings.Join(append(listen,
		"HostKey "+hostKey,
		"AuthorizedKeysFile "+filepath.Join(l.Dir, "ssh", "id_ed25519.pub"),
		// sshd reads AuthorizedKeysFile as the target user, who cannot enter the lab's 0700
		// dirs; for core the key comes through a command run as root.
		"AuthorizedKeysCommand /bin/cat "+filepath.Join(l.Dir, "ssh", "id_ed25519.pub"),
		"AuthorizedKeysCommandUser root",
		"PidFile none", "UsePAM no", "StrictModes no", "PasswordAuthentication no",
		"KbdInteractiveAuthentication no", "PermitRootLogin prohibit-password", "LogLevel ERROR",
		// The nodes' own commands first: lsmod where this machine has no /proc/modules.
		"Match User core",
		"\tForceCommand "+nodeShell, "",
	), "\n")
	path := filepath.Join(dir, "sshd_config")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		return err
	}
	pub, err := os.ReadFile(hostKey + ".pub")
	if err != nil {
		return err
	}
	f := strings.Fields(string(pub))
	var kh strings.Builder
	for _, host := range nodeIPs(l) {
		if port != 22 {
			host = "[" + host + "]:" + strconv.Itoa(port)
		}
		kh.WriteString(host + " " + f[0] + " " + f[1] + "\n")
	}
	d.KnownHosts = filepath.Join(dir, "known_hosts")
	if err := os.WriteFile(d.KnownHosts, []byte(kh.String()), 0o644); err != nil {
		return err
	}
	d.p, err = startProc(ctx, l, "sshd", d.addr, "/usr/sbin/sshd", "-D", "-e", "-f", path)
	return err
}

// maxListen is sshd's limit of listen sockets (MAX_LISTEN_SOCKS).
const maxListen = 16

// nodeIPs are the profile's node addresses (the rendezvous host first), then spare worker
// addresses of the plan (.31-.39) so that a node a test adds to the profile later is reachable
// too, up to sshd's limit of listen sockets.
func nodeIPs(l *Lab) []string {
	out := []string{l.IP(21).String()}
	add := func(ip string) {
		if ip != "" && len(out) < maxListen && !slices.Contains(out, ip) {
			out = append(out, ip)
		}
	}
	for _, n := range l.Site.Nodes {
		add(nodeIP(n))
	}
	for h := byte(31); h <= 39; h++ {
		add(l.IP(h).String())
	}
	return out
}

// ensureCoreUser creates the system user core (RHCOS's only login, which the configure stage's
// lsmod check and gather use) when this machine has none: no home, no password, key login only
// through the lab's AuthorizedKeysCommand. Labs in parallel processes (go test runs packages at
// once) take a file lock first: on a fresh machine both would see no core and the second useradd
// would fail with "already exists".
func ensureCoreUser() error {
	lock, err := os.OpenFile(filepath.Join(os.TempDir(), "bootstrap-lab-core-user.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("core user lock: %w", err)
	}
	defer lock.Close() // closing releases the lock
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("core user lock: %w", err)
	}
	if exec.Command("id", "-u", "core").Run() == nil {
		return nil
	}
	if out, err := exec.Command("useradd", "--system", "--no-create-home", "--home-dir", "/nonexistent",
		"--shell", "/bin/sh", "core").CombinedOutput(); err != nil {
		return fmt.Errorf("useradd core (the nodes' login; run the lab as root once): %v: %s", err, out)
	}
	// A locked account ("!") refuses even key logins without PAM; "*" only has no password.
	if out, err := exec.Command("usermod", "-p", "*", "core").CombinedOutput(); err != nil {
		return fmt.Errorf("usermod core: %v: %s", err, out)
	}
	return nil
}

// sshPort is 22 when free on the rendezvous address (what gather dials), else a remembered one.
func sshPort(l *Lab) (int, error) {
	if ln, err := net.Listen("tcp", net.JoinHostPort(l.IP(21).String(), "22")); err == nil {
		ln.Close()
		l.RememberPort("sshd", 22)
		return 22, nil
	}
	return l.FreePort("sshd", 21)
}

// Configure implements Component: the profile has no field for it yet (gather dials port 22 of
// each node's address).
func (d *SSHD) Configure(*site.Site, *Lab) error { return nil }

// Stop implements Component.
func (d *SSHD) Stop(context.Context) error {
	if d.nodeDir != "" {
		os.RemoveAll(d.nodeDir)
	}
	if d.p == nil {
		return nil
	}
	return d.p.Stop()
}

// Addr is host:port.
func (d *SSHD) Addr() string { return d.addr }

// Describe implements Describer.
func (d *SSHD) Describe() string {
	return fmt.Sprintf("sshd      %s OpenSSH as the rendezvous node (key ssh/id_ed25519, known_hosts sshd/known_hosts)", d.addr)
}
