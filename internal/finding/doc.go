// Package finding is the one shape of a check's result: a Finding has a Status (pass, warn,
// fail), the check or field it concerns, where (file:line:column, an object path, a node), a
// message, a remedy and the stages it blocks. Profile validation (site), strict decoding
// (yamlstrict), the installer's rules (agentiso), the BMC read-only checks (bmc) and the
// preflight runner all return Findings, so one text form, one JSON form and one list type serve
// them all.
//
// It is a leaf: it imports nothing of bootstrap's.
package finding
