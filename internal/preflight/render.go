package preflight

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/finding"
)

// WriteTable writes the report as an aligned text table, one row per check, with each remedy on
// the line below its check, and a summary line.
func WriteTable(w io.Writer, r Report) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "STATUS\tCATEGORY\tCHECK\tNEEDED BY\tTIME\tDETAIL")
	for _, c := range r.Checks {
		lines := strings.Split(strings.TrimRight(c.Message, "\n"), "\n")
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", c.Verdict(), c.Category, c.Name, neededBy(c.NeededBy), roundDuration(c.Duration), lines[0])
		for _, l := range lines[1:] {
			fmt.Fprintf(tw, "\t\t\t\t\t  %s\n", l)
		}
		if c.Remedy != "" && c.Status != finding.Pass {
			fmt.Fprintf(tw, "\t\t\t\t\t→ %s\n", c.Remedy)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, r.Summary)
	return err
}

// Verdict is PASS, WARN, FAIL, or "FAIL (not blocking)" for a failure none of whose stages runs.
func (c CheckResult) Verdict() string {
	if c.Status == finding.Fail && !c.Blocking {
		return "FAIL (not blocking)"
	}
	return c.Status.Label()
}

// String is the summary line: "3 passed, 1 warning(s), 1 failed, 2 failed outside the stages
// selected (not blocking)".
func (s Summary) String() string {
	out := fmt.Sprintf("%d passed, %d warning(s), %d failed", s.Pass, s.Warn, s.Fail)
	if s.NotBlocking > 0 {
		out += fmt.Sprintf(", %d failed outside the stages selected (not blocking)", s.NotBlocking)
	}
	return out
}

func neededBy(stages []string) string {
	if len(stages) == 0 {
		return "all"
	}
	return strings.Join(stages, ",")
}

// WriteJSON writes the report as one indented JSON document.
func WriteJSON(w io.Writer, r Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

func roundDuration(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return "<1ms"
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	default:
		return d.Round(10 * time.Millisecond).String()
	}
}
