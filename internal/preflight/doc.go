// Package preflight owns the read-only checks run before anything changes: the Check interface,
// the concurrent runner with per-check timeouts, the text table and JSON renderings, and the
// checks themselves, grouped by what they touch.
//
// A check is a small value with a Name, a Category and a Run that returns a Result (Pass, Warn or
// Fail, a Message saying what was seen, a Remedy saying what to do). Checks never change
// anything, never print and never read flags; they take their inputs from the site profile and
// Options when they are built (Checks) and a context when they run (Runner.Run gives each its own
// deadline). Results come back ordered by category, then in build order, however they finished;
// Report.Err returns a *FailedError when any check failed (the CLI's exit code 2).
//
// The jump-host checks:
//
//   - jumphost: free space where the work dir is (Options.MinFreeBytes, the mirror plan's need
//     when known); the ISO serve address can be listened on.
//   - files: every file the profile names exists and parses: the SSH public key, container auth
//     files (with an entry for the registry), PEM certificates (valid now, warned 30 days before
//     expiry), secret files (present, content never read into a message), secret env vars set.
//   - dns: api and api-int resolve to exactly the API VIPs, a random *.apps name to exactly the
//     ingress VIPs (the rendezvousIP for a single node without VIPs), node names to their nmstate
//     addresses (a missing node record is a warning), against every cluster.dnsServers entry
//     (else the system resolver); the jump host's own resolver must also find the API.
//   - ntp: every source answers an SNTP query with a usable time, and the local clock is within
//     Options.MaxClockOffset of it.
//   - network: no VIP is already in use (see vip.go for what is and is not detectable).
//   - bmc: each node's BMC, read-only through bmc.Preflight (see bmc.go).
//   - git: with the profile's CA or known_hosts and credentials, the GitOps repository answers,
//     gitops.revision exists and gitops.path is a directory at it (gitrepo.Prove: git ls-remote,
//     a shallow blob-less fetch of the one commit, git ls-tree). These checks carry their own
//     timeout (GitTimeout; a check may implement TimeoutCheck).
//
// To add a group (registry): write a file with
//
//	func registryChecks(s *site.Site, o Options) []Check
//
// returning one Check per thing worth reporting (Func makes one from a function), add it to the
// list in groups (options.go), and give each check a passing and a failing test against a real
// peer on loopback. Never put a secret value in a Result.
package preflight
