// Package gitrepo proves, from the jump host and before anything changes, that a GitOps
// repository is what the site profile says: the server answers with the profile's CA (or SSH
// host key) and credentials, the revision (branch, tag or commit) exists, and the path exists at
// that revision. It drives the git CLI (git ls-remote, a shallow blob-less fetch, git ls-tree)
// in a private temporary configuration, so what it proves is what a Git client, like Argo CD's,
// will see. Secrets go into 0600 files in a 0700 temporary directory that is removed afterwards,
// never into argv, the environment or error messages.
//
// gitrepotest serves a real repository through git http-backend over TLS for tests.
package gitrepo
