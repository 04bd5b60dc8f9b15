// Package redact is the one scrubber every byte leaving the process passes through: it knows each
// secret value the site references and the forms a program or a peer derives from it (base64 of
// user:password as in a Basic Authorization header, JSON-escaped as encoding/json writes it,
// URL-encoded, HTML-escaped, and those nested once more, as when a peer's JSON error body is
// quoted in our JSON output), and replaces each occurrence of a whole value with [redacted].
//
// Whole values only: an occurrence glued to letters or digits on either side (a short password
// inside an ordinary word) is left alone, so text stays readable; site validation refuses secrets
// shorter than MinLen so no secret hides behind that rule.
package redact
