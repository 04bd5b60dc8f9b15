package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
	"github.com/bootstrap-dev/bootstrap/internal/preflight"
	"github.com/bootstrap-dev/bootstrap/internal/stages"
)

// window is the stages a run of --from/--until/--only selects, in order; nil for every stage.
type window struct{ from, until, only string }

func addWindowFlags(cmd *cobra.Command, w *window, what string) {
	cmd.Flags().StringVar(&w.from, "from", "", "first stage "+what+" ("+stageNames()+")")
	cmd.Flags().StringVar(&w.until, "until", "", "last stage "+what)
	cmd.Flags().StringVar(&w.only, "only", "", "this stage alone (the same as --from STAGE --until STAGE)")
	completeStages(cmd, "from", "until", "only")
}

// options turns the window into the runner's, refusing --only with --from or --until.
func (w window) options() (pipeline.RunOptions, error) {
	if w.only != "" {
		if w.from != "" || w.until != "" {
			return pipeline.RunOptions{}, usageError{fmt.Errorf("--only %s names one stage: leave out --from and --until", w.only)}
		}
		return pipeline.RunOptions{From: w.only, Until: w.only}, nil
	}
	return pipeline.RunOptions{From: w.from, Until: w.until}, nil
}

// names is the stages selected among all, in order.
func (w window) names(all []string) []string {
	o, err := w.options()
	if err != nil || (o.From == "" && o.Until == "") {
		return all
	}
	first, last := 0, len(all)-1
	for i, n := range all {
		if n == o.From {
			first = i
		}
		if n == o.Until {
			last = i
		}
	}
	if first > last {
		return nil
	}
	return all[first : last+1]
}

// withScope hands the preflight stage the stages this run selects besides itself; a run of
// preflight alone (--until preflight) checks for every stage.
func withScope(list []pipeline.Stage, scope []string) []pipeline.Stage {
	if scope = checkScope(scope); scope == nil {
		return list
	}
	out := make([]pipeline.Stage, len(list))
	for i, st := range list {
		if p, ok := st.(stages.Preflight); ok {
			p.Scope = scope
			st = p
		}
		out[i] = st
	}
	return out
}

// narrower is the run that would proceed past a preflight failure: the stages from the first
// selected up to the last one the failures do not block (preflight.FailedError.Proceed), as a
// command line; "" when none would. fromStart: the window began with the first stage.
func narrower(file string, err error, fromStart bool) string {
	var fe *preflight.FailedError
	if !errors.As(err, &fe) || len(fe.Proceed) == 0 {
		return ""
	}
	ok := fe.Proceed
	args := []string{"bootstrap run"}
	if file != "" {
		args = append(args, "-f", file)
	}
	switch {
	case fromStart:
		args = append(args, "--until", ok[len(ok)-1])
	case len(ok) == 1:
		args = append(args, "--only", ok[0])
	default:
		args = append(args, "--from", ok[0], "--until", ok[len(ok)-1])
	}
	return fmt.Sprintf("the failed checks block only %s: `%s` proceeds with the stages they do not block",
		strings.Join(fe.Blocked, ", "), strings.Join(args, " "))
}

// checkScope is the stages whose checks count for a window: the window without preflight itself;
// nil (every stage) when that leaves nothing.
func checkScope(names []string) []string {
	out := slices.DeleteFunc(slices.Clone(names), func(s string) bool { return s == stages.NamePreflight })
	if len(out) == 0 {
		return nil
	}
	return out
}
