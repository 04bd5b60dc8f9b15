package preflight

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/finding"
	"github.com/bootstrap-dev/bootstrap/internal/fsroot"
	"github.com/bootstrap-dev/bootstrap/internal/gitrepo"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// GitTimeout bounds the Git checks: an ls-remote and a shallow fetch of one commit, which take
// longer than a DNS query on a slow site link.
const GitTimeout = 90 * time.Second

// gitChecks prove, with the profile's CA (or known_hosts) and credentials, that the GitOps
// repository answers, that gitops.revision exists and that gitops.path is a directory at it,
// before the handoff stage changes anything. One probe (gitrepo.Prove: git ls-remote, a shallow
// blob-less fetch, git ls-tree) serves the three rows.
func gitChecks(s *site.Site, o Options) []Check {
	g := s.GitOps
	if g.RepoURL == "" {
		return nil
	}
	p := &gitProbe{site: s, workDir: o.WorkDir}
	rev := g.Revision
	if rev == "" {
		rev = "HEAD"
	}
	path := g.Path
	if path == "" {
		path = "."
	}
	return []Check{
		withTimeout(Func("git repository", CategoryGit, func(ctx context.Context) finding.Finding { return p.result(ctx, gitrepo.StepRepository) }), GitTimeout),
		withTimeout(Func("git revision "+rev, CategoryGit, func(ctx context.Context) finding.Finding { return p.result(ctx, gitrepo.StepRevision) }), GitTimeout),
		withTimeout(Func("git path "+path, CategoryGit, func(ctx context.Context) finding.Finding { return p.result(ctx, gitrepo.StepPath) }), GitTimeout),
	}
}

// gitProbe proves the repository once for all of its rows.
type gitProbe struct {
	site    *site.Site
	workDir string // the credentials live under it while git runs
	once    sync.Once
	proof   gitrepo.Proof
	err     error
}

// repo reads the secrets at the moment of use; the result is never logged.
func (p *gitProbe) repo() (gitrepo.Repo, error) {
	s := p.site
	g := s.GitOps
	r := gitrepo.Repo{URL: g.RepoURL, Revision: g.Revision, Path: g.Path, Username: g.Credentials.Username, Dir: p.workDir}
	var err error
	if ref := g.Credentials.Password; !ref.IsZero() {
		b, err := site.ReadSecret(site.SecretRef{File: resolvePath(s, ref.File), Env: ref.Env})
		if err != nil {
			return r, fmt.Errorf("gitops.credentials.password: %w", err)
		}
		r.Password = string(b)
	}
	if f := g.Credentials.SSHKeyFile; f != "" {
		if r.SSHKey, err = site.ReadSecretFile(resolvePath(s, f)); err != nil {
			return r, fmt.Errorf("gitops.credentials.sshKeyFile: %w", err)
		}
	}
	if f := g.Credentials.KnownHostsFile; f != "" {
		if r.KnownHosts, err = fsroot.ReadFile(resolvePath(s, f), fsroot.PEM); err != nil {
			return r, fmt.Errorf("gitops.credentials.knownHostsFile: %w", err)
		}
	}
	if f := g.CAFile; f != "" {
		if r.CA, err = fsroot.ReadFile(resolvePath(s, f), fsroot.PEM); err != nil {
			return r, fmt.Errorf("gitops.caFile: %w", err)
		}
	}
	return r, nil
}

func (p *gitProbe) result(ctx context.Context, step gitrepo.Step) finding.Finding {
	p.once.Do(func() {
		r, err := p.repo()
		if err != nil {
			p.err = &gitrepo.Error{Step: gitrepo.StepRepository, Msg: err.Error(), Fix: "fix the file or variable the profile refers to"}
			return
		}
		p.proof, p.err = gitrepo.Prove(ctx, r)
	})
	g := p.site.GitOps
	if p.err != nil {
		var ge *gitrepo.Error
		if !errors.As(p.err, &ge) {
			ge = &gitrepo.Error{Step: gitrepo.StepRepository, Msg: p.err.Error(), Fix: "install git on the jump host and run preflight again"}
		}
		switch {
		case ge.Step == step:
			return finding.Failf(ge.Fix, "%s", ge.Msg)
		case stepRank(step) > stepRank(ge.Step):
			return finding.Warnf("fix the git "+string(ge.Step)+" check first", "not checked: the git %s check failed", ge.Step)
		}
	}
	short := p.proof.Commit
	if len(short) > 12 {
		short = short[:12]
	}
	switch step {
	case gitrepo.StepRepository:
		how := "system CA roots"
		if g.CAFile != "" {
			how = "TLS verified with gitops.caFile"
		}
		if g.Credentials.SSHKeyFile != "" {
			how = "host key verified with gitops.credentials.knownHostsFile"
		}
		creds := "no credentials"
		if g.Credentials.Username != "" || g.Credentials.SSHKeyFile != "" {
			creds = "credentials accepted"
		}
		return finding.Passf("%s answers (%s, %s)", g.RepoURL, how, creds)
	case gitrepo.StepRevision:
		if p.proof.Ref == "" {
			return finding.Passf("commit %s exists", p.proof.Commit)
		}
		return finding.Passf("%s is commit %s", p.proof.Ref, short)
	default:
		if p.proof.Path == "." {
			return finding.Passf("the repository root at %s", short)
		}
		return finding.Passf("%s is a directory at %s", p.proof.Path, short)
	}
}

func stepRank(s gitrepo.Step) int {
	switch s {
	case gitrepo.StepRepository:
		return 0
	case gitrepo.StepRevision:
		return 1
	}
	return 2
}
