package main

import "github.com/spf13/cobra"

// addCommands wires every command into the root.
func addCommands(root *cobra.Command, g *globals) {
	_ = g
}

// domainExitCode maps the domain packages' typed errors to exit codes.
func domainExitCode(err error) (int, bool) {
	return 0, false
}
