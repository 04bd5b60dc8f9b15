package finding

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Status is the verdict of a finding, from best to worst. The zero value is Pass, so a Finding
// built with only a Message reads as a pass; a check that fails must say so.
type Status int

// Statuses, from best to worst.
const (
	Pass Status = iota
	Warn
	Fail
)

// String is the status as JSON writes it: "pass", "warn" or "fail".
func (s Status) String() string {
	switch s {
	case Pass:
		return "pass"
	case Warn:
		return "warn"
	case Fail:
		return "fail"
	}
	return fmt.Sprintf("Status(%d)", int(s))
}

// Label is the status in a table column: PASS, WARN or FAIL.
func (s Status) Label() string { return strings.ToUpper(s.String()) }

// Word is the status in a problem listing, as compilers write it: "error" for Fail, "warning"
// for Warn ("ok" for Pass, which a listing does not hold).
func (s Status) Word() string {
	switch s {
	case Fail:
		return "error"
	case Warn:
		return "warning"
	}
	return "ok"
}

// MarshalJSON writes the status as "pass", "warn" or "fail".
func (s Status) MarshalJSON() ([]byte, error) {
	if s < Pass || s > Fail {
		return nil, fmt.Errorf("finding: unknown status %d", int(s))
	}
	return json.Marshal(s.String())
}

// UnmarshalJSON reads "pass", "warn" or "fail" (so a journaled report reads back), and the
// listing words "warning" and "error".
func (s *Status) UnmarshalJSON(b []byte) error {
	var v string
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	switch v {
	case "pass":
		*s = Pass
	case "warn", "warning":
		*s = Warn
	case "fail", "error":
		*s = Fail
	default:
		return fmt.Errorf("finding: unknown status %q", v)
	}
	return nil
}

// Position is where a value is written in a document; Line and Column are 1-based, 0 when
// unknown (a defaulted value, or a value built in Go rather than loaded).
type Position struct {
	File   string `json:"file,omitempty"`
	Line   int    `json:"line,omitempty"`
	Column int    `json:"column,omitempty"`
}

// String formats the position as file:line:column, leaving out what is unknown.
func (p Position) String() string {
	switch {
	case p.Line > 0 && p.Column > 0:
		return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Column)
	case p.Line > 0:
		return fmt.Sprintf("%s:%d", p.File, p.Line)
	}
	return p.File
}

// Finding is one thing a check found: what, where, how bad and how to fix it. Messages never
// contain secret values.
type Finding struct {
	Status Status `json:"status"`
	// Check names the check that found it ("bmc-tls"); empty for a profile problem.
	Check string `json:"check,omitempty"`
	// Node is the node it concerns, if any.
	Node string `json:"node,omitempty"`
	// Position is where in a document, if it concerns one.
	Position
	// Path is the field or object path ("nodes[2].bmc.address"); empty for the document itself.
	Path    string `json:"path,omitempty"`
	Message string `json:"message"`
	// Remedy says what to do about a Warn or Fail; empty on Pass.
	Remedy string `json:"remedy,omitempty"`
	// NeededBy is the stages it blocks when it fails (empty: every stage).
	NeededBy []string `json:"neededBy,omitempty"`
	// AlsoNamedBy lists the other fields with the very same problem (one missing CA file named
	// by seven fields is one problem), "path (line N)" each, comma-separated.
	AlsoNamedBy string `json:"alsoNamedBy,omitempty"`
	// CausedBy is the field path of the finding this one follows from (a node's misspelled role
	// leaves the cluster without control plane): shown folded under it; fixing it clears this.
	CausedBy string `json:"causedBy,omitempty"`
}

// Passf builds a Pass finding.
func Passf(format string, args ...any) Finding {
	return Finding{Status: Pass, Message: fmt.Sprintf(format, args...)}
}

// Warnf builds a Warn finding with a remedy.
func Warnf(remedy, format string, args ...any) Finding {
	return Finding{Status: Warn, Message: fmt.Sprintf(format, args...), Remedy: remedy}
}

// Failf builds a Fail finding with a remedy.
func Failf(remedy, format string, args ...any) Finding {
	return Finding{Status: Fail, Message: fmt.Sprintf(format, args...), Remedy: remedy}
}

// String is the one-line text form:
// "site.yaml:12:5: error: nodes[2].bmc.address (node cp-0): message (also named by ...) (fix: remedy)";
// the parts a finding does not have are left out.
func (f Finding) String() string {
	var b strings.Builder
	if pos := f.Position.String(); pos != "" {
		b.WriteString(pos + ": ")
	}
	b.WriteString(f.Status.Word() + ": ")
	head := f.Path
	if head == "" {
		head = f.Check
	}
	if f.Node != "" {
		head += " (node " + f.Node + ")"
	}
	if head != "" {
		b.WriteString(head + ": ")
	}
	b.WriteString(f.Message)
	if f.AlsoNamedBy != "" {
		b.WriteString(" (also named by " + f.AlsoNamedBy + ")")
	}
	if f.Remedy != "" {
		b.WriteString(" (fix: " + f.Remedy + ")")
	}
	return b.String()
}

// Equal reports whether f and g are the same finding, field by field.
func (f Finding) Equal(g Finding) bool {
	return f.Status == g.Status && f.Check == g.Check && f.Node == g.Node && f.Position == g.Position &&
		f.Path == g.Path && f.Message == g.Message && f.Remedy == g.Remedy && f.AlsoNamedBy == g.AlsoNamedBy &&
		f.CausedBy == g.CausedBy && slices.Equal(f.NeededBy, g.NeededBy)
}
