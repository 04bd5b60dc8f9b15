package preflight

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// WriteTable writes the report as an aligned text table, one row per check, with each remedy on
// the line below its check, and a summary line.
func WriteTable(w io.Writer, r Report) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "STATUS\tCATEGORY\tCHECK\tTIME\tDETAIL")
	for _, c := range r.Checks {
		lines := strings.Split(strings.TrimRight(c.Message, "\n"), "\n")
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", c.Status, c.Category, c.Name, roundDuration(c.Duration), lines[0])
		for _, l := range lines[1:] {
			fmt.Fprintf(tw, "\t\t\t\t  %s\n", l)
		}
		if c.Remedy != "" && c.Status != Pass {
			fmt.Fprintf(tw, "\t\t\t\t→ %s\n", c.Remedy)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "%d passed, %d warning(s), %d failed\n", r.Summary.Pass, r.Summary.Warn, r.Summary.Fail)
	return err
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
