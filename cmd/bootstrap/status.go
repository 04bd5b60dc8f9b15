package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
	"github.com/bootstrap-dev/bootstrap/internal/progress"
	"github.com/bootstrap-dev/bootstrap/internal/site"
	"github.com/bootstrap-dev/bootstrap/internal/stages"
)

func newStatusCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "status [-f site.yaml | --dir DIR]",
		Short: "Show the journal folded: stages, steps, nodes, timings, last error and its remedy",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// -f names the work dir beside it: a profile that is not there or not valid would show
			// some other (likely empty) work dir as if it were this site's. --dir needs no profile.
			var s *site.Site
			if g.file != "" {
				var err error
				if s, err = g.loadSite(); err != nil {
					return err
				}
			}
			dir, err := g.workDir()
			if err != nil {
				return err
			}
			r := &pipeline.Runner{Stages: g.stageList(nil), WorkDir: dir}
			st, entries, err := r.StatusEntries()
			if err != nil {
				return err
			}
			access := accessOf(dir, s, st)
			boots := stages.NodeBoots(pipeline.BuildHistory(entries))
			if g.json() {
				setResult(cmd, struct {
					pipeline.Status
					// Boot is each node's boot verdict: its evidence, or why it is unverified.
					Boot   []stages.NodeBoot `json:"boot,omitempty"`
					Access *Access           `json:"access,omitempty"`
				}{st, boots, access})
			} else {
				printStatus(g.stdout, dir, st)
				printBoots(g.stdout, boots)
				printAccess(g.stdout, access)
			}
			if st.Chain != "" { // shown above; the exit code tells scripts
				return integrityError{fmt.Errorf("journal integrity: %s", st.Chain)}
			}
			return nil
		},
	}
}

func printStatus(w io.Writer, dir string, st pipeline.Status) {
	fmt.Fprintf(w, "work dir: %s (%d journal entries, %d runs)\n", dir, st.Entries, st.Runs)
	if st.LastRun != nil {
		lr := st.LastRun
		state := progress.LastRunState(*lr, st.Lock != nil)
		fmt.Fprintf(w, "last run: %s at %s, %s\n", lr.Info.Command, lr.Started.Local().Format(time.DateTime), state)
	}
	if st.Lock != nil {
		fmt.Fprintf(w, "locked by: %s\n", st.Lock)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "STAGE\tSTATE\tSTEPS\tNODES\tTIME\tNOTE")
	for _, s := range st.Stages {
		note := stageNote(s)
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\n", s.Name, s.State, s.Steps, len(s.Nodes), dur(s.Seconds), note)
	}
	_ = tw.Flush()
	for _, s := range st.Stages {
		if s.Error == "" {
			continue
		}
		fmt.Fprintf(w, "\n%s failed: %s\n", s.Name, s.Error)
		if s.Remedy != "" {
			fmt.Fprintf(w, "remedy: %s\n", s.Remedy)
		}
	}
	switch {
	case st.Tail != "":
		fmt.Fprintf(w, "\nJOURNAL %s: %s\n", strings.ToUpper(st.Tail), st.Chain)
	case st.Chain != "":
		fmt.Fprintf(w, "\nJOURNAL CHAIN BROKEN: %s\n", st.Chain)
	case st.Entries > 0:
		fmt.Fprintf(w, "journal hash chain verified, its end witnessed; head %s\n", st.Head)
	}
	for _, warn := range st.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
}

// printBoots lists each node's boot verdict; an unverified boot is said in words, with why and
// what to do, since exit 0 alone would hide it.
func printBoots(w io.Writer, boots []stages.NodeBoot) {
	if len(boots) == 0 {
		return
	}
	fmt.Fprintln(w, "\nboot, per node:")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, b := range boots {
		fmt.Fprintf(tw, "  %s\t%s\n", b.Node, b.Caveat())
	}
	_ = tw.Flush()
	if u := stages.Unverified(boots); len(u) > 0 {
		fmt.Fprintf(w, "warning: %d node(s) booted without evidence (%s): check their BMC consoles show the agent ISO booting; install names any node that has not appeared\n",
			len(u), strings.Join(u, ", "))
	}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return s
}

func dur(sec float64) string {
	if sec == 0 {
		return "-"
	}
	return (time.Duration(sec*float64(time.Second)) / time.Millisecond * time.Millisecond).String()
}

// stageNote says what is true of a stage now, not only why it last started: a stage that ran for
// the first time and succeeded is "succeeded 14:02:11 (ran: first run)", not "first run".
func stageNote(s pipeline.StageStatus) string {
	at := func(t time.Time) string { return t.Local().Format(time.TimeOnly) }
	switch s.State {
	case pipeline.StatePending:
		return "not run yet"
	case pipeline.StateSucceeded:
		if s.Skipped {
			return "done earlier (journaled), found done in the last run: " + s.Reason
		}
		note := "succeeded " + at(s.Succeeded)
		if s.Reason != "" {
			note += " (ran: " + s.Reason + ")"
		}
		return note
	case pipeline.StateStale:
		return "will run again: " + s.Reason
	case pipeline.StateRunning:
		note := "started " + at(s.Started) + ", no end recorded (running now, or killed)"
		if s.LastStep != "" {
			note += "; last step " + s.LastStep
		}
		return note
	case pipeline.StateFailed, pipeline.StateInterrupted:
		return firstLine(s.Error)
	}
	return s.Reason
}
