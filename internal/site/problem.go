package site

import (
	"errors"
	"fmt"

	"github.com/bootstrap-dev/bootstrap/internal/finding"
)

// unique sorts and drops exact duplicates (a problem inside an anchor merged into many places).
func unique(ps finding.List) finding.List {
	ps.Sort()
	out := ps[:0]
	for i, p := range ps {
		if i > 0 && p.Equal(ps[i-1]) {
			continue
		}
		out = append(out, p)
	}
	return out
}

// merged reports each problem once: problems with the same severity, message and remedy at
// other fields (a missing file several fields name) are folded into the first, which lists the
// other fields in AlsoNamedBy. The result is sorted.
func merged(ps finding.List) finding.List {
	ps.Sort()
	type key struct {
		sev               finding.Status
		file, msg, remedy string
	}
	first := map[key]int{}
	var out finding.List
	for _, p := range ps {
		k := key{p.Status, p.File, p.Message, p.Remedy}
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

// Invalid returns an *Errors holding every problem (warnings too) when at least one is an
// error, else nil.
func Invalid(ps finding.List) error {
	if !ps.HasErrors() {
		return nil
	}
	return &Errors{Problems: ps}
}

// ErrInvalid is matched (errors.Is) by every *Errors: the profile is invalid.
var ErrInvalid = errors.New("invalid site profile")

// Errors is the error Load and Validate callers get for an invalid profile. It holds every
// problem found, warnings included; cmd/ maps it to exit code 3.
type Errors struct {
	Problems finding.List
}

// Error summarizes: the file, the counts and the first error.
func (e *Errors) Error() string {
	errs, warns := e.Problems.Count()
	file := ""
	var first finding.Finding
	for _, p := range e.Problems {
		if p.Status == finding.Fail {
			first = p
			file = p.File
			break
		}
	}
	msg := fmt.Sprintf("invalid site profile %s: %s", file, finding.Plural(errs, "error"))
	if warns > 0 {
		msg += ", " + finding.Plural(warns, "warning")
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
func AsProblems(err error) (finding.List, bool) {
	var e *Errors
	if errors.As(err, &e) {
		return e.Problems, true
	}
	return nil, false
}
