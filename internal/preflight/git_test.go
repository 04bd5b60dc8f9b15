package preflight

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/finding"
	"github.com/bootstrap-dev/bootstrap/internal/gitrepo/gitrepotest"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// The Git checks run the git CLI against a real git http-backend over TLS with basic auth: the
// profile's CA and credentials, the revision and the path are each proven, and each failure
// names what is missing and the fix.
func TestGitChecks(t *testing.T) {
	srv := gitrepotest.Start(t)
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ca := write("git-ca.pem", srv.CA)
	_, otherPEM := gitrepotest.SelfSigned(t)
	otherCA := write("other-ca.pem", otherPEM)
	token := write("git-token", []byte(srv.Password+"\n"))
	wrongToken := write("wrong-token", []byte("not-the-token\n"))

	good := site.GitOps{RepoURL: srv.URL, Revision: "main", Path: "clusters/lab", CAFile: ca,
		Credentials: site.GitCredentials{Username: srv.Username, Password: site.SecretRef{File: token}}}
	type want struct{ repo, rev, path finding.Status }
	tests := []struct {
		name   string
		change func(g *site.GitOps)
		want   want
		says   string // in the failing row's message and remedy
	}{
		{"pass", func(*site.GitOps) {}, want{finding.Pass, finding.Pass, finding.Pass}, ""},
		{"wrong revision", func(g *site.GitOps) { g.Revision = "mian" }, want{finding.Pass, finding.Fail, finding.Warn}, "branches: main, release-1"},
		{"wrong path", func(g *site.GitOps) { g.Path = "clusters/labs" }, want{finding.Pass, finding.Pass, finding.Fail}, "clusters/ holds: lab/, prod/"},
		{"wrong password", func(g *site.GitOps) { g.Credentials.Password.File = wrongToken }, want{finding.Fail, finding.Warn, finding.Warn}, "refused the credentials"},
		{"untrusted CA", func(g *site.GitOps) { g.CAFile = otherCA }, want{finding.Fail, finding.Warn, finding.Warn}, "gitops.caFile"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := testSite()
			s.GitOps = good
			tc.change(&s.GitOps)
			got := runChecks(t, gitChecks(s, Options{}))
			rows := []CheckResult{
				wantStatus(t, got, "git repository", tc.want.repo),
				wantStatus(t, got, "git revision "+s.GitOps.Revision, tc.want.rev),
				wantStatus(t, got, "git path "+s.GitOps.Path, tc.want.path),
			}
			var said string
			for _, r := range rows {
				t.Logf("%s: %s (%s)", r.Name, r.Message, r.Remedy)
				if strings.Contains(r.Message+r.Remedy, srv.Password) || strings.Contains(r.Message+r.Remedy, "not-the-token") {
					t.Errorf("%s carries a password: %s", r.Name, r.Message)
				}
				if r.Status == finding.Fail {
					said += r.Message + " " + r.Remedy
				}
			}
			if tc.says != "" && !strings.Contains(said, tc.says) {
				t.Errorf("the failure does not say %q: %s", tc.says, said)
			}
			if tc.want.rev == finding.Pass && !strings.Contains(rows[1].Message, srv.Commits[1][:12]) {
				t.Errorf("revision row does not name main's commit %s: %s", srv.Commits[1][:12], rows[1].Message)
			}
		})
	}
}
