// Package preflight owns the read-only checks run before anything changes: the Check interface,
// the concurrent runner with per-check timeouts, the text table and JSON renderings, and the
// checks themselves, grouped by what they touch (jump host disk, DNS, VIPs, NTP, files; registry,
// BMC and Git checks are added the same way).
//
// A check is a small value with a Name, a Category and a Run that returns a Result. Checks never
// change anything, never print and never read flags; they take their inputs from the site profile
// and Options when they are built (see Checks) and a context when they run.
//
// To add a group of checks: write a file with a constructor such as
//
//	func registryChecks(s *site.Site, o Options) []Check
//
// that returns one Check per thing worth reporting (use Func for a check that is just a
// function), and add it to the list in groups (options.go). Each Run honours ctx (the runner gives every check its own
// deadline), returns Pass, Warn or Fail with a Message saying what was seen, and on Warn or Fail
// a Remedy saying what the field engineer should do. Never put a secret value in a Result.
package preflight
