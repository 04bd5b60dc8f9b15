package main

import (
	"context"
	"errors"
	"fmt"
	"os/signal"
	"slices"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
	"github.com/bootstrap-dev/bootstrap/internal/progress"
	"github.com/bootstrap-dev/bootstrap/internal/stages"
)

func newRunCmd(g *globals) *cobra.Command {
	var w window
	cmd := &cobra.Command{
		Use:   "run -f site.yaml [--from STAGE] [--until STAGE] [--only STAGE]",
		Short: "Run the whole pipeline, resuming from the journal",
		Long: `Run every stage in order. Stages that already succeeded with the same inputs (and whose
result still verifies) are skipped; a stage whose inputs changed runs again and marks every later
stage stale. Interrupt at any moment (Ctrl-C, kill -9, power loss): the next run continues.

Stages:
` + stageHelp(),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, err := w.options()
			if err != nil {
				return err
			}
			// preflight blocks only on the checks the selected stages need
			g.scope = w.names(stageList())
			g.fromStart = opts.From == "" || opts.From == stages.NamePreflight
			check := func(r *pipeline.Runner) error { return r.CheckRun(opts) }
			return g.withRunner(cmd, "run", check, func(ctx context.Context, r *pipeline.Runner) error {
				return r.Run(ctx, opts)
			})
		},
	}
	addWindowFlags(cmd, &w, "to run")
	acceptTailFlag(cmd, g)
	return cmd
}

func newReplayCmd(g *globals) *cobra.Command {
	var nodes []string
	cmd := &cobra.Command{
		Use:   "replay STAGE [--node NAME]...",
		Short: "Run one stage again, even if it finished (optionally for some nodes only)",
		Long: `Run one stage again after a failure or a change, even if it already succeeded. With --node,
node-level stages (boot) act on the named nodes only. When the replayed stage's output
changes, every later stage is marked stale and runs again on the next run.

Stages:
` + stageHelp(),
		Args: cobra.ExactArgs(1),
		ValidArgsFunction: func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return stageList(), cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			check := func(r *pipeline.Runner) error { return r.CheckReplay(args[0], nodes) }
			return g.withRunner(cmd, "replay "+args[0], check, func(ctx context.Context, r *pipeline.Runner) error {
				return r.Replay(ctx, args[0], nodes)
			})
		},
	}
	cmd.Flags().StringSliceVar(&nodes, "node", nil, "limit node-level stages to this node (repeatable)")
	acceptTailFlag(cmd, g)
	return cmd
}

// acceptTailFlagName continues from a journal whose end does not match its witness.
const acceptTailFlagName = "accept-journal-tail"

func acceptTailFlag(cmd *cobra.Command, g *globals) {
	cmd.Flags().BoolVar(&g.acceptTail, acceptTailFlagName, false,
		"continue from a journal that was truncated (rolled back), edited at its end or extended outside bootstrap; "+
			"what the missing entries recorded is done again")
}

// tailRemedy says what refusing a journal's end means and what the flag would do.
func tailRemedy(err error) error {
	return fmt.Errorf("%w\nbootstrap refuses to continue: the entries that are missing or changed may have recorded actions "+
		"(a node powered on or rebooted, media inserted, a manifest applied) that a run would then repeat or skip.\n"+
		"remedy: find out what happened to the journal (restore it from a backup, or keep it as evidence and move the "+
		"work dir aside to start afresh). To continue from the journal as it is, run again with --%s: every stage and "+
		"step it no longer records as done runs again (nodes may be powered on or rebooted again, media inserted again, "+
		"manifests applied again), and the journal's witness is reset to the journal as it is, with a warning entry "+
		"saying so", err, acceptTailFlagName)
}

// withRunner loads the site, refuses what check refuses (before anything is created or journaled),
// builds the session and runs fn with Ctrl-C/SIGTERM cancelling it
// (the runner journals the interruption). It prints the final status line.
func (g *globals) withRunner(cmd *cobra.Command, command string, check func(*pipeline.Runner) error,
	fn func(context.Context, *pipeline.Runner) error) error {
	s, err := g.loadSite()
	if err != nil {
		return err
	}
	if err := check(&pipeline.Runner{Stages: g.stageList(nil), Site: s}); err != nil {
		return err
	}
	sess, err := g.newSession(s, command)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	err = fn(ctx, sess.runner)
	sess.Close()
	if err == nil {
		// What now: the kubeconfig, the console, the kubeadmin password's file, Argo CD; and
		// only what this command saw: a stage found done in the journal is not called ready.
		var (
			access  *Access
			closing string
		)
		if st, entries, serr := sess.runner.StatusEntries(); serr == nil {
			access = accessOf(sess.runner.WorkDir, s, st)
			if access != nil {
				access.CheckedNow = checkedThisRun(st, entries, stages.NameInstall)
			}
			closing = closingLine(sess.runner, st, entries)
		}
		if g.json() {
			if access != nil {
				setResult(cmd, map[string]any{"access": access})
			}
			return nil
		}
		fmt.Fprintln(g.stdout, closing)
		printAccess(g.stdout, access)
		return nil
	}
	var te *pipeline.TailError
	if errors.As(err, &te) {
		return tailRemedy(err)
	}
	var se *pipeline.StageError
	if n := narrower(g.file, err, g.fromStart); n != "" {
		return remedyError{err, n + "; or fix what each failed check reports and run again"}
	}
	if errors.As(err, &se) && errors.Is(err, context.Canceled) && !g.json() {
		// exit 130; the stage's own text is "interrupted: context canceled" twice over
		again := "bootstrap run"
		if command != "run" {
			again = "bootstrap " + command
		}
		return fmt.Errorf("interrupted in stage %s: the journal records every step finished before it\n"+
			"remedy: run `%s` again to continue from there%w", se.Stage, again, quiet{err})
	}
	if errors.As(err, &se) && se.Remedy() != "" && !g.json() {
		return fmt.Errorf("%w\nremedy: %s", err, se.Remedy())
	}
	return err
}

// stageList is the stage names in order, from the stage table.
func stageList() []string { return stages.Names() }

func completeStages(cmd *cobra.Command, flags ...string) {
	for _, f := range flags {
		_ = cmd.RegisterFlagCompletionFunc(f, func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return stageList(), cobra.ShellCompDirectiveNoFileComp
		})
	}
}

// checkedThisRun reports whether the last run saw stage hold: it ran and succeeded, or it was
// found done and its Verify held ("; verified").
func checkedThisRun(st pipeline.Status, entries []pipeline.Entry, stage string) bool {
	h := pipeline.BuildHistory(entries)
	if len(h.Runs) == 0 {
		return false
	}
	last := h.Runs[len(h.Runs)-1]
	ss := st.Stage(stage)
	return slices.Contains(last.Ran, stage) && ss.State == pipeline.StateSucceeded ||
		slices.Contains(last.Skipped, stage) && progress.SkipVerified(ss.Reason)
}

// closingLine is the last line of a run or replay that returned no error (progress.Verdicts).
func closingLine(r *pipeline.Runner, st pipeline.Status, entries []pipeline.Entry) string {
	h := pipeline.BuildHistory(entries)
	if len(h.Runs) == 0 {
		return "done; `bootstrap status` shows the details"
	}
	info := h.Runs[len(h.Runs)-1].Info
	if info.Mode == "replay" {
		return progress.ReplayVerdict(info.Stage, info.Nodes)
	}
	return progress.RunVerdict(st, r.StageNames(), info.From, info.Until)
}
