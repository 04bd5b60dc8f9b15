package handoff_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/bootstrap-dev/bootstrap/internal/gather/sshtest"
	"github.com/bootstrap-dev/bootstrap/internal/handoff"
)

func gitRun(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func TestGitRefsSSHAgainstRealSSHDAndGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git not found: run scripts/install-deps.sh")
	}
	s := sshtest.Start(t)
	dir := t.TempDir()
	bare := filepath.Join(dir, "config.git")
	work := filepath.Join(dir, "work")
	gitRun(t, dir, "init", "-q", "--bare", bare)
	gitRun(t, dir, "init", "-q", work)
	if err := os.MkdirAll(filepath.Join(work, "clusters/lab"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "clusters/lab/kustomization.yaml"), []byte("resources: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitRun(t, work, "add", ".")
	gitRun(t, work, "commit", "-q", "-m", "lab")
	gitRun(t, work, "push", "-q", bare, "HEAD:refs/heads/main")

	key, err := os.ReadFile(s.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	kh := knownhosts.Line([]string{knownhosts.Normalize(s.Addr)}, s.HostKey) + "\n"
	repo := handoff.Repo{URL: "ssh://" + s.User + "@127.0.0.1:" + strconv.Itoa(s.Port) + bare, SSHPrivateKey: key, KnownHosts: []byte(kh)}
	refs, err := handoff.GitRefsSSH(context.Background(), repo)
	if err != nil {
		t.Fatal(err)
	}
	if ok, _, err := handoff.CheckRevision(refs, "main"); !ok || err != nil {
		t.Fatalf("refs %v: %v", refs, err)
	}

	s.Restart(t) // the server's host key changes: refused
	if _, err := handoff.GitRefsSSH(context.Background(), repo); err == nil || !strings.Contains(err.Error(), "key mismatch") {
		t.Fatalf("a changed Git server key must be refused: %v", err)
	}
}
