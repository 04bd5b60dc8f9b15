package harness

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/gitrepo"
)

// The Git server is real smart HTTP over TLS with basic auth: the check preflight and the handoff
// stage run (gitrepo.Prove) finds main's commit and the root application's path with the lab CA and the
// profile's credentials, and fails without them.
func TestGitServer(t *testing.T) {
	g := &Git{}
	l, err := New(t.TempDir(), &Files{}, g)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Up(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Down(context.Background()) })
	ca, err := os.ReadFile(filepath.Join(l.Dir, CAFile))
	if err != nil {
		t.Fatal(err)
	}
	pw, err := secretFile(filepath.Join(l.Dir, l.Site.GitOps.Credentials.Password.File))
	if err != nil {
		t.Fatal(err)
	}
	repo := gitrepo.Repo{URL: l.Site.GitOps.RepoURL, Revision: "main", Path: GitOpsPath,
		Username: l.Site.GitOps.Credentials.Username, Password: pw, CA: ca}
	proof, err := gitrepo.Prove(context.Background(), repo)
	if err != nil {
		t.Fatalf("Prove: %v", err)
	}
	head, err := g.Head("main")
	if err != nil {
		t.Fatal(err)
	}
	if proof.Commit != head || proof.Ref != "refs/heads/main" {
		t.Errorf("proof %+v, want refs/heads/main at %s", proof, head)
	}
	// The site's content is committed only when it changes: the same content is main's commit.
	if again, err := g.Commit("again", siteFiles(g.URL()), true); err != nil || again != head {
		t.Errorf("committing the same site again: %s, %v; want main's %s", again, err, head)
	}
	if next, err := g.Commit("fault", map[string]string{"README.md": ""}, false); err != nil || next == head {
		t.Errorf("removing README.md: %s, %v; want a new commit", next, err)
	}
	if _, err := g.Head("no-such-branch"); err == nil {
		t.Error("Head of a missing branch succeeded")
	}
	bad := repo
	bad.Password = "wrong"
	if _, err := gitrepo.Prove(context.Background(), bad); err == nil {
		t.Error("wrong password accepted")
	}
	noCA := repo
	noCA.CA = nil
	if _, err := gitrepo.Prove(context.Background(), noCA); err == nil || !strings.Contains(strings.ToLower(err.Error()), "certificate") {
		t.Errorf("without the lab CA: %v, want a certificate error", err)
	}
}
