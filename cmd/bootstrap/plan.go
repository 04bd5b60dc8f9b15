package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
	"github.com/bootstrap-dev/bootstrap/internal/stages"
)

func newPlanCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "plan -f site.yaml",
		Short: "Say what each stage would do, changing nothing",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := g.loadSite()
			if err != nil {
				return err
			}
			dir, err := g.workDir()
			if err != nil {
				return err
			}
			// No session: plan writes nothing, not even a log file.
			r := &pipeline.Runner{Stages: stages.All(), Site: s, WorkDir: dir}
			plans, err := r.Plan(cmd.Context())
			if err != nil {
				return err
			}
			if j := jsonOut(cmd); j != nil {
				for _, p := range plans {
					j.line("plan", p)
				}
				for _, c := range s.Chosen() {
					j.line("default", c)
				}
				return nil
			}
			for _, p := range plans {
				fmt.Fprintf(g.stdout, "%-10s %s", p.Stage, p.Action)
				if p.Reason != "" {
					fmt.Fprintf(g.stdout, ": %s", p.Reason)
				}
				fmt.Fprintln(g.stdout)
				for _, l := range p.Lines {
					fmt.Fprintf(g.stdout, "           %s\n", l)
				}
				if p.Error != "" {
					fmt.Fprintf(g.stdout, "           error: %s\n", p.Error)
				}
			}
			return printChosen(g.stdout, s.Chosen())
		},
	}
}
