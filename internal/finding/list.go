package finding

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// List is a list of findings.
type List []Finding

// Sort orders findings deterministically: file, line, column, path, worst status first, message.
func (l List) Sort() {
	sort.SliceStable(l, func(i, j int) bool {
		a, b := l[i], l[j]
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
		if a.Status != b.Status {
			return a.Status > b.Status
		}
		return a.Message < b.Message
	})
}

// Count returns the number of failures and of warnings.
func (l List) Count() (fails, warnings int) {
	for _, f := range l {
		switch f.Status {
		case Fail:
			fails++
		case Warn:
			warnings++
		}
	}
	return fails, warnings
}

// HasErrors reports whether any finding is a failure.
func (l List) HasErrors() bool {
	n, _ := l.Count()
	return n > 0
}

// Only returns the findings of status s, in order.
func (l List) Only(s Status) List {
	var out List
	for _, f := range l {
		if f.Status == s {
			out = append(out, f)
		}
	}
	return out
}

// String joins the one-line forms, one per line.
func (l List) String() string {
	lines := make([]string, len(l))
	for i, f := range l {
		lines[i] = f.String()
	}
	return strings.Join(lines, "\n")
}

// Format writes the listing `bootstrap validate` prints: each finding on a line with what it is
// also named by and its remedy indented below, a finding caused by another folded under it, then
// the counts.
func (l List) Format(w io.Writer) error {
	var b strings.Builder
	knock := 0
	for _, f := range l {
		pos := f.Position.String()
		if pos != "" {
			pos += ": "
		}
		head := f.Path
		if head == "" {
			head = f.Check
		}
		if head != "" {
			head += ": "
		}
		if f.CausedBy != "" {
			knock++
			fmt.Fprintf(&b, "    ↳ which also makes %s%s: %s%s\n", pos, f.Status.Word(), head, f.Message)
			continue
		}
		fmt.Fprintf(&b, "%s%s: %s%s\n", pos, f.Status.Word(), head, f.Message)
		if f.AlsoNamedBy != "" {
			b.WriteString("    also named by: " + f.AlsoNamedBy + "\n")
		}
		if f.Remedy != "" {
			b.WriteString("    fix: " + f.Remedy + "\n")
		}
	}
	fails, warns := l.Count()
	if knock > 0 {
		fmt.Fprintf(&b, "%s (%d of them knock-on, cleared by fixing their cause), %s\n", Plural(fails, "error"), knock, Plural(warns, "warning"))
	} else {
		fmt.Fprintf(&b, "%s, %s\n", Plural(fails, "error"), Plural(warns, "warning"))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Plural writes "1 error", "2 errors".
func Plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
