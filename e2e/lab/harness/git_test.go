package harness

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/handoff"
)

// The Git server is real smart HTTP over TLS with basic auth: the handoff stage's own check reads
// main's commit with the lab CA and the profile's credentials, and fails without them.
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
	repo := handoff.Repo{URL: l.Site.GitOps.RepoURL, Username: l.Site.GitOps.Credentials.Username, Password: pw, CA: ca}
	refs, err := handoff.GitRefs(context.Background(), repo, nil)
	if err != nil {
		t.Fatalf("GitRefs: %v", err)
	}
	head, err := g.Head("main")
	if err != nil {
		t.Fatal(err)
	}
	if refs["refs/heads/main"] != head {
		t.Errorf("refs/heads/main = %q, want %q (all: %v)", refs["refs/heads/main"], head, refs)
	}
	if _, err := g.Head("no-such-branch"); err == nil {
		t.Error("Head of a missing branch succeeded")
	}
	bad := repo
	bad.Password = "wrong"
	if _, err := handoff.GitRefs(context.Background(), bad, nil); err == nil {
		t.Error("wrong password accepted")
	}
	noCA := repo
	noCA.CA = nil
	if _, err := handoff.GitRefs(context.Background(), noCA, nil); err == nil || !strings.Contains(strings.ToLower(err.Error()), "certificate") {
		t.Errorf("without the lab CA: %v, want a certificate error", err)
	}
}
