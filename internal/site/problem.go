package site

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/bootstrap-dev/bootstrap/internal/yamlstrict"
)

// Severity says whether a problem stops a run (error) or only deserves attention (warning).
type Severity int

// Severities, most severe first.
const (
	SeverityError Severity = iota
	SeverityWarning
)

// String returns "error" or "warning".
func (s Severity) String() string {
	if s == SeverityWarning {
		return "warning"
	}
	return "error"
}

// MarshalText makes a Severity read as its name in JSON.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Position is where a value is written in a profile; Line and Column are 1-based, 0 when unknown
// (a defaulted value, or a Site built in Go rather than loaded).
type Position = yamlstrict.Position

// Problem is one thing wrong with a profile: where, which field, what and how to fix it.
// Messages never contain secret values.
type Problem struct {
	Position
	// Path is the field path, e.g. "nodes[2].bmc.address"; empty for the document itself.
	Path     string   `json:"path"`
	Severity Severity `json:"severity"`
	Message  string   `json:"message"`
	Remedy   string   `json:"remedy,omitempty"`
	// AlsoNamedBy lists the other fields with the very same problem (one missing CA file named
	// by seven fields is one problem), "path (line N)" each, comma-separated.
	AlsoNamedBy string `json:"alsoNamedBy,omitempty"`
	// CausedBy is the field path of the error this one follows from (a node's misspelled role
	// leaves the cluster without control plane): shown folded under it; fixing it clears this.
	CausedBy string `json:"causedBy,omitempty"`
}

// String is the one-line form: "site.yaml:12:5: error: nodes[2].bmc.address: message (fix: remedy)".
func (p Problem) String() string {
	var b strings.Builder
	b.WriteString(p.Position.String())
	b.WriteString(": ")
	b.WriteString(p.Severity.String())
	b.WriteString(": ")
	if p.Path != "" {
		b.WriteString(p.Path)
		b.WriteString(": ")
	}
	b.WriteString(p.Message)
	if p.AlsoNamedBy != "" {
		b.WriteString(" (also named by " + p.AlsoNamedBy + ")")
	}
	if p.Remedy != "" {
		b.WriteString(" (fix: ")
		b.WriteString(p.Remedy)
		b.WriteString(")")
	}
	return b.String()
}

// Problems is a list of problems; Validate returns it sorted by position, then path.
type Problems []Problem

// Sort orders problems deterministically: file, line, column, path, severity, message.
func (ps Problems) Sort() {
	sort.SliceStable(ps, func(i, j int) bool {
		a, b := ps[i], ps[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Column != b.Column {
			return a.Column < b.Column
		}
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		if a.Severity != b.Severity {
			return a.Severity < b.Severity
		}
		return a.Message < b.Message
	})
}

// unique sorts and drops exact duplicates (a problem inside an anchor merged into many places).
func (ps Problems) unique() Problems {
	ps.Sort()
	out := ps[:0]
	for i, p := range ps {
		if i > 0 && p == ps[i-1] {
			continue
		}
		out = append(out, p)
	}
	return out
}

// merged reports each problem once: problems with the same severity, message and remedy at
// other fields (a missing file several fields name) are folded into the first, which lists the
// other fields in AlsoNamedBy. The result is sorted.
func (ps Problems) merged() Problems {
	ps.Sort()
	type key struct {
		sev               Severity
		file, msg, remedy string
	}
	first := map[key]int{}
	var out Problems
	for _, p := range ps {
		k := key{p.Severity, p.File, p.Message, p.Remedy}
		i, seen := first[k]
		if !seen || p.Path == "" {
			first[k] = len(out)
			out = append(out, p)
			continue
		}
		also := p.Path
		if p.Line != out[i].Line {
			also += fmt.Sprintf(" (line %d)", p.Line)
		}
		if out[i].AlsoNamedBy != "" {
			also = out[i].AlsoNamedBy + ", " + also
		}
		out[i].AlsoNamedBy = also
	}
	return out
}

// Count returns the number of errors and of warnings.
func (ps Problems) Count() (errs, warnings int) {
	for _, p := range ps {
		if p.Severity == SeverityError {
			errs++
		} else {
			warnings++
		}
	}
	return errs, warnings
}

// HasErrors reports whether any problem is an error.
func (ps Problems) HasErrors() bool {
	n, _ := ps.Count()
	return n > 0
}

// Warnings returns the warnings only.
func (ps Problems) Warnings() Problems {
	var out Problems
	for _, p := range ps {
		if p.Severity == SeverityWarning {
			out = append(out, p)
		}
	}
	return out
}

// String joins the one-line forms, one per line.
func (ps Problems) String() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// Err returns an *Errors holding every problem (warnings too) when at least one is an error, else nil.
func (ps Problems) Err() error {
	if !ps.HasErrors() {
		return nil
	}
	return &Errors{Problems: ps}
}

// Format writes each problem as a line with its remedy indented below, then a count.
// This is the text `bootstrap validate` prints and the golden files hold.
func (ps Problems) Format(w io.Writer) error {
	var b strings.Builder
	knock := 0
	for _, p := range ps {
		if p.CausedBy != "" {
			knock++
			fmt.Fprintf(&b, "    ↳ which also makes %s: %s: %s", p.Position.String(), p.Severity, p.Path+": "+p.Message+"\n")
			continue
		}
		fmt.Fprintf(&b, "%s: %s: ", p.Position.String(), p.Severity)
		if p.Path != "" {
			b.WriteString(p.Path + ": ")
		}
		b.WriteString(p.Message + "\n")
		if p.AlsoNamedBy != "" {
			b.WriteString("    also named by: " + p.AlsoNamedBy + "\n")
		}
		if p.Remedy != "" {
			b.WriteString("    fix: " + p.Remedy + "\n")
		}
	}
	errs, warns := ps.Count()
	if knock > 0 {
		fmt.Fprintf(&b, "%s (%d of them knock-on, cleared by fixing their cause), %s\n", plural(errs, "error"), knock, plural(warns, "warning"))
	} else {
		fmt.Fprintf(&b, "%s, %s\n", plural(errs, "error"), plural(warns, "warning"))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// ErrInvalid is matched (errors.Is) by every *Errors: the profile is invalid.
var ErrInvalid = errors.New("invalid site profile")

// Errors is the error Load and Validate callers get for an invalid profile. It holds every
// problem found, warnings included; cmd/ maps it to exit code 3.
type Errors struct {
	Problems Problems
}

// Error summarizes: the file, the counts and the first error.
func (e *Errors) Error() string {
	errs, warns := e.Problems.Count()
	file := ""
	var first Problem
	for _, p := range e.Problems {
		if p.Severity == SeverityError {
			first = p
			file = p.File
			break
		}
	}
	msg := fmt.Sprintf("invalid site profile %s: %s", file, plural(errs, "error"))
	if warns > 0 {
		msg += ", " + plural(warns, "warning")
	}
	if errs > 0 {
		msg += "; first: " + first.String()
	}
	return msg
}

// Is makes errors.Is(err, ErrInvalid) true.
func (e *Errors) Is(target error) bool { return target == ErrInvalid }

// IsInvalid reports whether err (or an error it wraps) says the profile is invalid.
func IsInvalid(err error) bool { return errors.Is(err, ErrInvalid) }

// AsProblems returns the problems carried by err, if it is (or wraps) an *Errors.
func AsProblems(err error) (Problems, bool) {
	var e *Errors
	if errors.As(err, &e) {
		return e.Problems, true
	}
	return nil, false
}
