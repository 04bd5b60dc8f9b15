package main

import (
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
)

// Verbosity: --log-level names a level; -v N sets it as oc's and kubectl's -v does (N < 4: info,
// the default; N >= 4: debug). -v never prints the version: --version and `bootstrap version` do.
//
//	error  the console shows stage transitions and failures; warnings and log lines are dropped
//	warn   ... and warnings
//	info   ... and the stages' log lines (the installer's, the mirror's), as before
//	debug  ... and the debug log (bootstrap.log, which always holds everything) on stderr too
var logLevels = []string{"error", "warn", "info", "debug"}

// debugVerbosity is the -v from which oc logs at debug level.
const debugVerbosity = 4

func addVerbosityFlags(root *cobra.Command, g *globals) {
	pf := root.PersistentFlags()
	pf.StringVar(&g.logLevel, "log-level", "info", "what the console shows: "+strings.Join(logLevels, ", "))
	pf.IntVarP(&g.verbosity, "v", "v", 0, fmt.Sprintf("log verbosity as oc's -v: %d or more is --log-level debug", debugVerbosity))
	_ = root.RegisterFlagCompletionFunc("log-level", func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return logLevels, cobra.ShellCompDirectiveNoFileComp
	})
}

// level is the console's level from --log-level and -v; a usage error for an unknown level.
func (g *globals) level(cmd *cobra.Command) (slog.Level, error) {
	name := g.logLevel
	if cmd != nil && cmd.Flags().Changed("v") && !cmd.Flags().Changed("log-level") {
		name = "info"
		if g.verbosity >= debugVerbosity {
			name = "debug"
		}
	}
	switch name {
	case "error":
		return slog.LevelError, nil
	case "warn", "warning":
		return slog.LevelWarn, nil
	case "info", "":
		return slog.LevelInfo, nil
	case "debug":
		return slog.LevelDebug, nil
	}
	if n, err := strconv.Atoi(name); err == nil { // --log-level 4, as -v 4
		g.logLevel, g.verbosity = "", n
		if n >= debugVerbosity {
			return slog.LevelDebug, nil
		}
		return slog.LevelInfo, nil
	}
	return 0, usageError{fmt.Errorf("--log-level %q: use %s (or -v N as oc's: %d or more is debug)",
		name, strings.Join(logLevels, ", "), debugVerbosity)}
}

// shown reports whether the console shows e at level: stage transitions, progress, steps and
// failures always; warnings from warn; log lines from info.
func shown(e pipeline.Event, level slog.Level) bool {
	switch e.Kind {
	case pipeline.Info:
		return level <= slog.LevelInfo
	case pipeline.Warning:
		return level <= slog.LevelWarn
	}
	return true
}
