// Package sshtest runs Debian's OpenSSH server (/usr/sbin/sshd) on loopback for tests, with a
// throwaway host key and a throwaway client key authorised for the current user.
package sshtest

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// Server is one sshd.
type Server struct {
	Addr   string // 127.0.0.1:port
	Port   int
	User   string
	Signer ssh.Signer // the client key authorised for User
	// HostKey is the server's public host key.
	HostKey ssh.PublicKey
	// KeyFile is the client's private key in OpenSSH format.
	KeyFile string
	// BinDir is put first on the PATH of every session: tests drop stand-ins there for commands
	// that cannot work in this sandbox (lsmod needs /proc/modules).
	BinDir string
	dir    string
	cmd    *exec.Cmd
}

// Start starts sshd on a free loopback port; the test fails when sshd is missing (run
// scripts/install-deps.sh) or does not come up. It is stopped at the end of the test.
func Start(t testing.TB) *Server {
	t.Helper()
	s := &Server{dir: t.TempDir()}
	s.BinDir = filepath.Join(s.dir, "bin")
	must(t, os.MkdirAll(s.BinDir, 0o755))
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	s.User = u.Username
	_, cpriv, _ := ed25519.GenerateKey(rand.Reader)
	s.Signer, _ = ssh.NewSignerFromKey(cpriv)
	blk, err := ssh.MarshalPrivateKey(cpriv, "sshtest client")
	if err != nil {
		t.Fatal(err)
	}
	s.KeyFile = filepath.Join(s.dir, "id_ed25519")
	must(t, os.WriteFile(s.KeyFile, pem.EncodeToMemory(blk), 0o600))
	must(t, os.WriteFile(filepath.Join(s.dir, "authorized_keys"), ssh.MarshalAuthorizedKey(s.Signer.PublicKey()), 0o600))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.Port = l.Addr().(*net.TCPAddr).Port
	l.Close()
	s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port))
	s.Restart(t)
	t.Cleanup(s.stop)
	return s
}

// Restart stops sshd and starts it again on the same port with a new host key (a reinstalled node).
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.stop()
	if _, err := os.Stat("/usr/sbin/sshd"); err != nil {
		t.Fatal("/usr/sbin/sshd not found: run scripts/install-deps.sh (Debian openssh-server)")
	}
	// sshd refuses to start without its privilege separation directory.
	if os.Geteuid() == 0 {
		must(t, os.MkdirAll("/run/sshd", 0o755))
	}
	_, hpriv, _ := ed25519.GenerateKey(rand.Reader)
	hs, _ := ssh.NewSignerFromKey(hpriv)
	s.HostKey = hs.PublicKey()
	blk, err := ssh.MarshalPrivateKey(hpriv, "")
	if err != nil {
		t.Fatal(err)
	}
	hk := filepath.Join(s.dir, "host_ed25519")
	must(t, os.WriteFile(hk, pem.EncodeToMemory(blk), 0o600))
	cfg := fmt.Sprintf(`Port %d
ListenAddress 127.0.0.1
HostKey %s
PidFile %s
AuthorizedKeysFile %s
AllowUsers %s
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
LogLevel ERROR
SetEnv PATH=%s:/usr/local/bin:/usr/bin:/bin
`, s.Port, hk, filepath.Join(s.dir, "sshd.pid"), filepath.Join(s.dir, "authorized_keys"), s.User, s.BinDir)
	cf := filepath.Join(s.dir, "sshd_config")
	must(t, os.WriteFile(cf, []byte(cfg), 0o600))
	s.cmd = exec.Command("/usr/sbin/sshd", "-D", "-e", "-f", cf)
	s.cmd.Stderr = os.Stderr
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("start sshd: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", s.Addr, time.Second)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("sshd did not listen on %s: %v", s.Addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (s *Server) stop() {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
		s.cmd = nil
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
