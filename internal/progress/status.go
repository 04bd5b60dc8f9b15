package progress

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
)

// WriteStatus renders a folded journal for `bootstrap status`: the last run, one row per stage
// (state, attempt, steps, time, reason), each node's progress, and the last error with its remedy.
func WriteStatus(w io.Writer, st pipeline.Status) error {
	var b strings.Builder
	if st.LastRun != nil {
		run := st.LastRun
		state := "running"
		switch {
		case run.Ended && run.Error != "":
			state = "failed"
		case run.Ended:
			state = "finished"
		case st.Lock == nil:
			state = "stopped without an end (killed or power loss)"
		}
		fmt.Fprintf(&b, "last run: %s %s, started %s, %s\n", run.Info.Mode, orDash(run.Info.Command),
			run.Started.Local().Format(time.RFC3339), state)
	} else {
		b.WriteString("no run recorded yet\n")
	}
	if st.Lock != nil {
		fmt.Fprintf(&b, "locked by %s\n", st.Lock)
	}
	b.WriteString("\n")
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "STAGE\tSTATE\tATTEMPT\tSTEPS\tTIME\tDETAIL")
	for _, s := range st.Stages {
		state := string(s.State)
		if s.Skipped {
			state += " (skipped)"
		}
		detail := s.Reason
		if s.Error != "" {
			detail = s.Error
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", s.Name, state, num(s.Attempt), num(s.Steps),
			seconds(s.Seconds), oneLine(detail, 80))
	}
	tw.Flush()
	for _, s := range st.Stages {
		if len(s.Nodes) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n%s nodes:\n", s.Name)
		for _, n := range s.Nodes {
			fmt.Fprintf(&b, "  %-20s %3d steps, last %s at %s\n", n.Name, n.Steps, n.Last, n.Time.Local().Format(time.TimeOnly))
		}
	}
	for _, s := range st.Stages {
		if s.Error == "" || s.State == pipeline.StateSucceeded {
			continue
		}
		fmt.Fprintf(&b, "\n%s %s: %s\n  remedy: %s\n", s.Name, s.State, s.Error, orDash(s.Remedy))
	}
	for _, warn := range st.Warnings {
		fmt.Fprintf(&b, "\nwarning: %s\n", warn)
	}
	if st.Chain != "" {
		fmt.Fprintf(&b, "\nJOURNAL DAMAGED: %s\n", st.Chain)
	} else if st.Entries > 0 {
		fmt.Fprintf(&b, "\njournal: %d entries, hash chain verified, head %s\n", st.Entries, st.Head)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WritePlan renders Runner.Plan for `bootstrap plan`.
func WritePlan(w io.Writer, plans []pipeline.StagePlan) error {
	var b strings.Builder
	for _, p := range plans {
		fmt.Fprintf(&b, "%-10s %-4s  %s\n", p.Stage, p.Action, p.Reason)
		for _, l := range p.Lines {
			fmt.Fprintf(&b, "             %s\n", l)
		}
		if p.Error != "" {
			fmt.Fprintf(&b, "             error: %s\n", p.Error)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func num(n int) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprint(n)
}

func seconds(s float64) string {
	if s == 0 {
		return "-"
	}
	return (time.Duration(s * float64(time.Second))).Round(time.Second).String()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func oneLine(s string, max int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > max {
		return s[:max-3] + "..."
	}
	return s
}
