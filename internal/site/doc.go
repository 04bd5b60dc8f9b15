// Package site owns the site profile: the one declarative input of a run. It defines the types,
// decodes YAML strictly with line numbers, fills defaults and validates every rule at once.
//
// Use:
//
//	s, warnings, err := site.LoadValidated("site.yaml")   // err is *site.Errors when invalid
//	if site.IsInvalid(err) { ... exit code 3 ... }
//	pw, err := site.ReadSecret(s.Nodes[0].BMC.Password)    // read at the moment of use
//
// Decoding (Parse, Load) walks the yaml.v3 node tree itself instead of yaml.Unmarshal, so that
// every problem is collected rather than only the first, each with file:line:column and a field
// path like nodes[2].bmc.address. Unknown fields are errors (with a "did you mean"); top-level
// fields starting with "x-" are ignored so anchors can live there and be merged with <<.
// Aliases are expanded against a node budget, so a "billion laughs" profile is refused.
//
// Validate returns Problems: errors and warnings (a separate severity: insecure TLS, an
// -ata-N root device, an unset secret environment variable), sorted by position. It never
// reads a secret; secret files are only stat'ed (mode & 0o077 must be 0). Problem messages
// never contain secret values: a secret written inline is reported without echoing it.
//
// Referenced files and the example profiles: Validate treats a missing file as an error. The
// MissingFilesAsWarnings option (`bootstrap validate --allow-missing-files`) downgrades that to
// a warning for reviewing a profile away from the jump host; files that exist are still checked
// in full. The profiles test validates each example twice: in an empty directory with that
// option (the only warnings allowed are missing files plus the listed intentional ones), then
// with every named file created (secrets 0600) and the option off, where it must be clean.
//
// profiles/schema.json is generated from the types by Schema:
//
//go:generate go test -run ^TestSchemaUpToDate$ -update .
package site
