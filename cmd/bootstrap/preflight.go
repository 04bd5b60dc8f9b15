package main

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
	"github.com/bootstrap-dev/bootstrap/internal/preflight"
	"github.com/bootstrap-dev/bootstrap/internal/site"
	"github.com/bootstrap-dev/bootstrap/internal/stages"
)

// preflightDeps is what the preflight command takes from the root command, so that it shares
// the global flags (-f, --dir, --output) without owning them.
type preflightDeps struct {
	// LoadSite loads and validates the profile named by -f (an invalid profile is exit 3).
	LoadSite func(cmd *cobra.Command) (*site.Site, error)
	// WorkDir returns the work dir (--dir, or .bootstrap/ beside the profile).
	WorkDir func(cmd *cobra.Command, s *site.Site) (string, error)
	// JSON reports whether --output json was asked for.
	JSON func(cmd *cobra.Command) bool
}

// newPreflightCmd builds `bootstrap preflight`. When a check fails it prints the results and
// returns a *preflight.FailedError, which Execute maps to exit code 2.
func newPreflightCmd(d preflightDeps) *cobra.Command {
	var (
		asJSON  bool
		minFree int64
		offset  time.Duration
		timeout time.Duration
		ports   []int
		w       window
	)
	cmd := &cobra.Command{
		Use:   "preflight",
		Short: "Read-only checks of everything the run will touch: PASS/WARN/FAIL table",
		Long: `Preflight checks, without changing anything, that the jump host and the site are ready:
free disk at the work dir, DNS records for api, api-int, *.apps and the nodes (against
cluster.dnsServers when set), that the VIPs are not already taken, that every NTP source answers
and the local clock agrees with it, and that every file the profile names exists and parses.

Once the journal records a successful install, the VIPs belong to the cluster and are not
probed. Each check names the stages that need it (NEEDED BY); with --from, --until or --only only
the failures of checks those stages need count (the others are shown as not blocking), as in
` + "`bootstrap run`" + ` with the same flags. Exit code 2 when a check that counts fails; warnings do not fail.`,
		Args:         cobra.NoArgs,
		SilenceUsage: true, // a failed check is not a usage error
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := d.LoadSite(cmd)
			if err != nil {
				return err
			}
			dir, err := d.WorkDir(cmd, s)
			if err != nil {
				return err
			}
			// The pipeline's own preflight stage, so that the checks other adapters add (More)
			// and its disk need are the same here; flags the user set win.
			st := preflightStage()
			st.Options.MinFreeBytes, st.Options.MaxClockOffset, st.Options.VIPPorts = minFree<<30, offset, ports
			if cmd.Flags().Changed("min-free-gib") {
				st.DiskNeed = nil
			}
			env := &pipeline.Env{Site: s, WorkDir: dir, Outputs: journalOutputs(dir)}
			checks, err := st.Checks(cmd.Context(), env)
			if err != nil {
				return err
			}
			if _, err := w.options(); err != nil {
				return err
			}
			rep := preflight.Runner{Timeout: timeout}.Run(cmd.Context(), checks).Scoped(checkScope(w.names(stageList())))
			out := cmd.OutOrStdout()
			if asJSON || (d.JSON != nil && d.JSON(cmd)) {
				// One "check" line per check, then the result with the summary.
				j := jsonOut(cmd)
				if j == nil { // --json without -o json: nobody else writes the result line
					j = &jsonLines{w: out, command: "preflight", data: rep.Summary}
					defer func() { j.result(rep.Err(), exitCode(rep.Err())) }()
				} else {
					setResult(cmd, rep.Summary)
				}
				for _, c := range rep.Checks {
					j.line("check", c)
				}
			} else {
				err = preflight.WriteTable(out, rep)
			}
			if err != nil {
				return fmt.Errorf("preflight: write results: %w", err)
			}
			if err := cmd.Context().Err(); err != nil { // interrupted: not a verdict on the site
				return fmt.Errorf("preflight: %w", err)
			}
			if err := rep.Err(); err != nil {
				if n := narrower(flagValue(cmd, "file"), err, w.from == "" && w.only == ""); n != "" {
					return remedyError{err, n}
				}
				return err
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.BoolVar(&asJSON, "json", false, "print the results as JSON (same as --output json)")
	f.Int64Var(&minFree, "min-free-gib", preflight.DefaultMinFreeBytes>>30, "free space the work dir needs, in GiB")
	f.DurationVar(&offset, "max-clock-offset", preflight.DefaultMaxClockOffset, "tolerated offset between the local clock and each NTP source")
	f.DurationVar(&timeout, "timeout", preflight.DefaultTimeout, "time limit of each check")
	f.IntSliceVar(&ports, "vip-ports", preflight.DefaultVIPPorts(), "TCP ports probed on each VIP to see whether something already holds it")
	addWindowFlags(cmd, &w, "the checks are for")
	return cmd
}

// preflightStage is the pipeline's preflight stage as stages.All configures it.
func preflightStage() stages.Preflight {
	for _, st := range stages.All() {
		if p, ok := st.(stages.Preflight); ok {
			return p
		}
	}
	return stages.Preflight{}
}

// journalOutputs are the outputs of the stages that succeeded, as the runner hands them to a
// stage: preflight learns from them that the cluster is installed (its VIPs then answer). An
// unreadable journal gives none, and the VIP check errs on the side of "in use".
func journalOutputs(dir string) map[string]json.RawMessage {
	entries, _, err := pipeline.ReadJournal(pipeline.JournalPath(dir))
	if err != nil || len(entries) == 0 {
		return nil
	}
	out := map[string]json.RawMessage{}
	for _, ss := range pipeline.Fold(entries).Stages {
		if len(ss.Output) > 0 {
			out[ss.Name] = ss.Output
		}
	}
	return out
}
