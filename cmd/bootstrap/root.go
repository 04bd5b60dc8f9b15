package main

import (
	"io"

	"github.com/spf13/cobra"
)

// NewRootCmd builds the command tree.
func NewRootCmd(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "bootstrap",
		Short:         "Take a site from bare metal to a GitOps-managed OpenShift cluster, resumably",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	return root
}

// Execute runs the CLI and returns the process exit code.
func Execute(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := NewRootCmd(stdout, stderr)
	root.SetArgs(args)
	root.SetIn(stdin)
	if err := root.Execute(); err != nil {
		io.WriteString(stderr, "error: "+err.Error()+"\n")
		return 1
	}
	return 0
}
