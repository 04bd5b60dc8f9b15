package main

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/bootstrap-dev/bootstrap/internal/mirror"
	"github.com/bootstrap-dev/bootstrap/internal/preflight"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// addCommands wires every command into the root.
func addCommands(root *cobra.Command, g *globals) {
	root.AddCommand(
		newInitCmd(),
		newValidateCmd(),
		newPreflightCmd(preflightDeps{
			LoadSite: func(*cobra.Command) (*site.Site, error) { return g.loadSite() },
			WorkDir:  func(*cobra.Command, *site.Site) (string, error) { return g.workDir() },
			JSON:     func(*cobra.Command) bool { return g.json() },
		}),
		newMirrorCmd(),
		newISOCmd(g),
		newServeCmd(g),
		newGatherCmd(g),
		newPlanCmd(g),
		newRunCmd(g),
		newReplayCmd(g),
		newStatusCmd(g),
		newReportCmd(g),
		newUpgradeCmd(g),
	)
}

// domainExitCode maps the domain packages' typed errors to exit codes.
func domainExitCode(err error) (int, bool) {
	switch {
	case isLocked(err):
		return exitLocked, true
	case isIntegrity(err):
		return exitIntegrity, true
	case site.IsInvalid(err):
		return exitInvalid, true
	}
	// An ImageSetConfiguration with problems is invalid input like a profile: every problem was
	// named with its line.
	if _, ok := mirror.AsISCProblems(err); ok {
		return exitInvalid, true
	}
	var pf *preflight.FailedError
	if errors.As(err, &pf) {
		return exitPreflight, true
	}
	var ie inputError
	if errors.As(err, &ie) {
		return exitInvalid, true
	}
	var ue usageError
	if errors.As(err, &ue) {
		return exitFailure, true
	}
	return 0, false
}
