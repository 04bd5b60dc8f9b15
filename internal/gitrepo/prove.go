package gitrepo

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"
)

// Repo is a repository and what must exist in it. Secret fields are only ever written to 0600
// files in Prove's private temporary directory.
type Repo struct {
	// URL is https://host/org/repo.git, ssh://git@host:port/org/repo.git or git@host:org/repo.git.
	URL string
	// Revision is a branch, a tag, a full ref name or a commit id; "" or "HEAD" means the
	// repository's default branch.
	Revision string
	// Path is the directory that must exist at Revision; "" or "." means the root.
	Path string
	// Username and Password are the HTTPS credentials (a token works as the password).
	Username, Password string
	// CA is the PEM bundle HTTPS is verified with; nil means the system roots.
	CA []byte
	// SSHKey is the SSH private key; KnownHosts the known_hosts lines the server's host key is
	// verified against.
	SSHKey, KnownHosts []byte
	// Dir is the work dir: the credentials live in Dir/git (0700) while Prove runs. "" means
	// the system's temporary folder.
	Dir string
}

// Step names what a proof step establishes; Error.Step says which one failed.
type Step string

// The steps of a proof, in order.
const (
	// StepRepository: the server answers with this CA or host key and these credentials.
	StepRepository Step = "repository"
	// StepRevision: the revision names a commit of the repository.
	StepRevision Step = "revision"
	// StepPath: the path is a directory at that commit.
	StepPath Step = "path"
)

// Error is a failed proof: the step that failed, what was seen, and the fix. Callers branch on
// Step with errors.As; the pipeline shows Remedy beside the message.
type Error struct {
	Step Step
	Msg  string
	Fix  string
}

func (e *Error) Error() string { return e.Msg }

// Remedy says what to do about it.
func (e *Error) Remedy() string { return e.Fix }

// Proof is what Prove established.
type Proof struct {
	// Ref is the ref the revision named ("refs/heads/main", "HEAD"); "" for a commit id.
	Ref string
	// Commit is the full commit id the revision names now.
	Commit string
	// Path is the cleaned path ("." for the root).
	Path string
}

var (
	fullSHARE = regexp.MustCompile(`^([0-9a-f]{40}|[0-9a-f]{64})$`)
	abbrevRE  = regexp.MustCompile(`^[0-9a-f]{7,63}$`)
)

// Prove checks, read-only, that r.URL answers with r's CA or host key and credentials, that
// r.Revision exists and that r.Path is a directory at it. A failure is an *Error naming what is
// missing and the fix (when only the path fails, the Proof still holds the ref and commit); ctx
// bounds every git command.
func Prove(ctx context.Context, r Repo) (Proof, error) {
	g, err := newCLI(r)
	if err != nil {
		return Proof{}, err
	}
	defer g.close()

	out, err := g.run(ctx, "ls-remote", "--symref", "--", r.URL)
	if err != nil {
		return Proof{}, g.remoteError(ctx, err)
	}
	refs := parseLsRemote(out)
	ref, commit, err := resolve(refs, r)
	if err != nil {
		return Proof{}, err
	}

	want := ref
	if want == "" {
		want = commit
	}
	if _, err := g.run(ctx, "init", "-q", "--bare", g.repo); err != nil {
		return Proof{}, fmt.Errorf("git init in %s: %w", g.dir, err)
	}
	if _, err := g.run(ctx, "--git-dir", g.repo, "fetch", "-q", "--no-tags", "--depth", "1", "--filter=blob:none", "--", r.URL, want); err != nil {
		if ctx.Err() == nil && ref == "" && notFound(err) {
			return Proof{}, &Error{Step: StepRevision,
				Msg: fmt.Sprintf("commit %s is not in %s", commit, r.URL),
				Fix: "push it, or set gitops.revision to a branch, tag or commit that exists"}
		}
		return Proof{}, g.remoteError(ctx, err)
	}
	sha, err := g.run(ctx, "--git-dir", g.repo, "rev-parse", "--verify", "FETCH_HEAD^{commit}")
	if err != nil {
		return Proof{}, &Error{Step: StepRevision, Msg: fmt.Sprintf("revision %q of %s is not a commit", r.Revision, r.URL),
			Fix: "set gitops.revision to a branch, a tag of a commit, or a commit id"}
	}
	commit = strings.TrimSpace(sha)

	p, err := g.provePath(ctx, commit, r)
	if err != nil {
		// What was proven before the path failed still holds.
		return Proof{Ref: ref, Commit: commit}, err
	}
	return Proof{Ref: ref, Commit: commit, Path: p}, nil
}

// parseLsRemote reads "<sha>\t<ref>" lines (and ignores "ref: <target>\tHEAD" symref lines).
func parseLsRemote(out string) map[string]string {
	refs := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		sha, name, ok := strings.Cut(sc.Text(), "\t")
		if !ok || strings.HasPrefix(sha, "ref: ") {
			continue
		}
		refs[name] = sha
	}
	return refs
}

// resolve maps r.Revision to the ref to fetch (or "" and a full commit id), the way Argo CD
// does: HEAD, a full ref name, a branch, a tag, then a commit id.
func resolve(refs map[string]string, r Repo) (ref, commit string, err error) {
	rev := r.Revision
	if rev == "" || rev == "HEAD" {
		if sha, ok := refs["HEAD"]; ok {
			return "HEAD", sha, nil
		}
		return "", "", &Error{Step: StepRevision, Msg: r.URL + " has no HEAD (an empty repository?)",
			Fix: "push the cluster configuration, or set gitops.revision to a branch or tag"}
	}
	for _, name := range []string{rev, "refs/heads/" + rev, "refs/tags/" + rev} {
		if name == "HEAD" || !strings.HasPrefix(name, "refs/") {
			continue
		}
		if sha, ok := refs[name]; ok {
			if peeled, ok := refs[name+"^{}"]; ok {
				sha = peeled
			}
			return name, sha, nil
		}
	}
	if fullSHARE.MatchString(rev) {
		return "", rev, nil
	}
	if abbrevRE.MatchString(rev) {
		var names []string
		for name, sha := range refs {
			if strings.HasPrefix(sha, rev) {
				names = append(names, name)
			}
		}
		sort.Strings(names)
		if len(names) > 0 {
			return strings.TrimSuffix(names[0], "^{}"), refs[names[0]], nil
		}
		return "", "", &Error{Step: StepRevision,
			Msg: fmt.Sprintf("abbreviated commit id %s is not the tip of a branch or tag of %s, so it cannot be fetched by itself", rev, r.URL),
			Fix: "give the full 40-character commit id in gitops.revision"}
	}
	return "", "", &Error{Step: StepRevision,
		Msg: fmt.Sprintf("revision %q is not a branch or tag of %s (%s)", rev, r.URL, listRefs(refs)),
		Fix: "set gitops.revision to one of them or to a commit id, or push " + rev}
}

// listRefs says which branches and tags exist, a few of each.
func listRefs(refs map[string]string) string {
	var branches, tags []string
	for name := range refs {
		switch {
		case strings.HasPrefix(name, "refs/heads/"):
			branches = append(branches, strings.TrimPrefix(name, "refs/heads/"))
		case strings.HasPrefix(name, "refs/tags/") && !strings.HasSuffix(name, "^{}"):
			tags = append(tags, strings.TrimPrefix(name, "refs/tags/"))
		}
	}
	return "branches: " + some(branches) + "; tags: " + some(tags)
}

// some lists up to 10 names, sorted, and says how many more there are.
func some(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	sort.Strings(names)
	if len(names) > 10 {
		return strings.Join(names[:10], ", ") + fmt.Sprintf(" and %d more", len(names)-10)
	}
	return strings.Join(names, ", ")
}

// provePath checks that r.Path is a directory at commit; when it is not, the error lists what
// the deepest existing parent directory holds.
func (g *cli) provePath(ctx context.Context, commit string, r Repo) (string, error) {
	p := path.Clean("/" + strings.TrimSpace(r.Path))[1:]
	if p == "" {
		return ".", nil
	}
	short := commit[:12]
	out, err := g.run(ctx, "--git-dir", g.repo, "ls-tree", commit, "--", p)
	if err != nil {
		return "", fmt.Errorf("git ls-tree %s: %w", short, err)
	}
	if mode, _, ok := strings.Cut(out, " "); ok && strings.TrimSpace(out) != "" {
		if mode == "040000" {
			return p, nil
		}
		return "", &Error{Step: StepPath,
			Msg: fmt.Sprintf("path %q at %s (%s) is a file, not a directory", p, revName(r), short),
			Fix: "set gitops.path to the directory holding the manifests or kustomization.yaml"}
	}
	// Walk up to the deepest directory that exists and say what it holds.
	parent := path.Dir(p)
	for parent != "." {
		out, err := g.run(ctx, "--git-dir", g.repo, "ls-tree", commit, "--", parent)
		if err == nil && strings.HasPrefix(out, "040000 ") {
			break
		}
		parent = path.Dir(parent)
	}
	spec := commit
	if parent != "." {
		spec += ":" + parent
	}
	out, err = g.run(ctx, "--git-dir", g.repo, "ls-tree", spec)
	if err != nil {
		return "", fmt.Errorf("git ls-tree %s: %w", short, err)
	}
	var entries []string
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		meta, name, ok := strings.Cut(sc.Text(), "\t")
		if !ok {
			continue
		}
		if strings.HasPrefix(meta, "040000 ") {
			name += "/"
		}
		entries = append(entries, name)
	}
	where := "the top level"
	if parent != "." {
		where = parent + "/"
	}
	return "", &Error{Step: StepPath,
		Msg: fmt.Sprintf("path %q does not exist at %s (%s); %s holds: %s", p, revName(r), short, where, some(entries)),
		Fix: "set gitops.path to the directory Argo CD should apply, or push " + p}
}

func revName(r Repo) string {
	if r.Revision == "" {
		return "HEAD"
	}
	return r.Revision
}

// notFound says whether a fetch failed because the server does not have what was asked for.
func notFound(err error) bool {
	var ce *cmdError
	if !errors.As(err, &ce) {
		return false
	}
	s := ce.stderr
	return strings.Contains(s, "not our ref") || strings.Contains(s, "couldn't find remote ref") ||
		strings.Contains(s, "no such remote ref") || strings.Contains(s, "unadvertised object")
}
