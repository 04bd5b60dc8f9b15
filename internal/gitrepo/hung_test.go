package gitrepo_test

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/gitrepo"
)

const hungChildEnv = "GITREPO_TEST_HUNG_CHILD" // "URL WORKDIR": run Prove until killed

func TestMain(m *testing.M) {
	if v := os.Getenv(reaperChildEnv); v != "" {
		reaperChild(v)
	}
	if v := os.Getenv(hungChildEnv); v != "" {
		url, dir, _ := strings.Cut(v, " ")
		_, _ = gitrepo.Prove(context.Background(), gitrepo.Repo{URL: url, Username: "lab", Password: hungToken, Dir: dir})
		os.Exit(0)
	}
	os.Exit(m.Run())
}

const hungToken = "hung-server-token-5e1f"

// hungServer accepts connections and never answers (not even the TLS handshake).
func hungServer(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return "https://" + l.Addr().String() + "/lab/cluster-config.git"
}

// workingIn lists the processes whose working directory is under dir.
func workingIn(dir string) []string {
	var out []string
	procs, _ := filepath.Glob("/proc/[0-9]*/cwd")
	for _, p := range procs {
		cwd, err := os.Readlink(p)
		if err == nil && strings.HasPrefix(strings.TrimSuffix(cwd, " (deleted)"), dir) {
			cmd, _ := os.ReadFile(filepath.Join(filepath.Dir(p), "cmdline"))
			out = append(out, filepath.Base(filepath.Dir(p))+": "+strings.ReplaceAll(string(cmd), "\x00", " "))
		}
	}
	return out
}

// credentialFiles lists the credential stores under dir.
func credentialFiles(dir string) []string {
	m, _ := filepath.Glob(filepath.Join(dir, "git", "*", "credentials"))
	return m
}

// waitFor polls cond (the child needs time to start git); it fails the test after a minute.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for i := 0; i < 600; i++ {
		if cond() {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("waited a minute for %s", what)
}

// TestProveHungServer: against a server that never answers, the check ends with its context;
// while it runs the token is under the work dir (0700), and afterwards neither the token nor any
// git process is left.
func TestProveHungServer(t *testing.T) {
	url := hungServer(t)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := gitrepo.Prove(ctx, gitrepo.Repo{URL: url, Username: "lab", Password: hungToken, Dir: dir})
		done <- err
	}()
	waitFor(t, "the credentials under the work dir", func() bool { return len(credentialFiles(dir)) == 1 })
	fi, err := os.Stat(filepath.Join(dir, "git"))
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("credentials folder: %v %v, want 0700", fi.Mode(), err)
	}
	if err := <-done; err == nil {
		t.Fatal("Prove against a hung server succeeded")
	}
	if left := credentialFiles(dir); len(left) != 0 {
		t.Errorf("credentials left behind: %v", left)
	}
	if ps := workingIn(dir); len(ps) != 0 {
		t.Errorf("git processes left running: %v", ps)
	}
}

// TestProveKilledMidCheck: bootstrap is killed -9 while git waits on a hung server. The next
// Prove (the next start) removes the dead process's credentials and kills the git processes
// it left.
func TestProveKilledMidCheck(t *testing.T) {
	url := hungServer(t)
	dir := t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	child := exec.Command(exe, "-test.run=^$")
	child.Env = append(os.Environ(), hungChildEnv+"="+url+" "+dir)
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "git running in the child's private folder", func() bool {
		return len(credentialFiles(dir)) == 1 && len(workingIn(filepath.Join(dir, "git"))) > 0
	})
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	if len(credentialFiles(dir)) != 1 {
		t.Fatal("the killed check's credentials are gone before the next start: the test proves nothing")
	}
	// the next start: another check (any outcome) cleans up first
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, _ = gitrepo.Prove(ctx, gitrepo.Repo{URL: url, Username: "lab", Password: hungToken, Dir: dir})
	if left := credentialFiles(dir); len(left) != 0 {
		t.Errorf("credentials of the killed check left: %v", left)
	}
	waitFor(t, "the killed check's git processes to go", func() bool { return len(workingIn(dir)) == 0 })
}

// TestKilledParentLeavesNoOrphan: bootstrap killed -9 while git's transport helper
// (git-remote-https, a grandchild) waits on a hung server: the whole group dies with it, before
// any next start, and no process is left working in the private folder.
func TestKilledParentLeavesNoOrphan(t *testing.T) {
	url := hungServer(t)
	dir := t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	child := exec.Command(exe, "-test.run=^$")
	child.Env = append(os.Environ(), hungChildEnv+"="+url+" "+dir)
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	helper := func() bool {
		for _, p := range workingIn(filepath.Join(dir, "git")) {
			if strings.Contains(p, "remote-https") {
				return true
			}
		}
		return false
	}
	waitFor(t, "git-remote-https running in the child's private folder", helper)
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	killed := time.Now()
	for i := 0; i < 50 && len(workingIn(dir)) > 0; i++ {
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("gone %v after the kill", time.Since(killed))
	if ps := workingIn(dir); len(ps) != 0 {
		t.Fatalf("orphans 5 s after the parent was killed: %v", ps)
	}
}
