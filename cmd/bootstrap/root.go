package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/bootstrap-dev/bootstrap/internal/progress"
	"github.com/bootstrap-dev/bootstrap/internal/redact"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// globals are the flags every command shares.
type globals struct {
	file   string // -f/--file: the site profile
	dir    string // --dir: the work dir
	output string // --output: text or json

	// stdout and stderr pass through scrub, which learns the site's secrets when a command
	// loads the profile.
	stdout, stderr io.Writer
	scrub          *redact.Scrubber

	acceptTail bool // run/replay --accept-journal-tail
}

// workDir is --dir, or .bootstrap/ beside the site file, or ./.bootstrap.
func (g *globals) workDir() (string, error) {
	d := g.dir
	if d == "" {
		base := "."
		if g.file != "" {
			base = filepath.Dir(g.file)
		}
		d = filepath.Join(base, ".bootstrap")
	}
	return filepath.Abs(d)
}

func (g *globals) json() bool { return g.output == "json" }

// needFile fails with a remedy when -f was not given.
func (g *globals) needFile() error {
	if g.file == "" {
		return usageError{fmt.Errorf("no site profile: pass -f site.yaml (write one with `bootstrap init --profile lab`)")}
	}
	return nil
}

// NewRootCmd builds the command tree with fresh state (tests make one per case).
func NewRootCmd(stdout, stderr io.Writer) *cobra.Command {
	sc := redact.New()
	stdout, stderr = sc.Writer(stdout), sc.Writer(stderr)
	g := &globals{stdout: stdout, stderr: stderr, scrub: sc}
	root := &cobra.Command{
		Use:   "bootstrap",
		Short: "Take a site from bare metal to a GitOps-managed OpenShift cluster, resumably",
		Long: `bootstrap runs one resumable pipeline from bare Dell PowerEdge metal to a running,
GitOps-managed OpenShift cluster on an air-gapped site. Every step is recorded in an append-only,
hash-chained journal (.bootstrap/journal.jsonl); any run can be stopped anywhere and continued.

Exit codes: 0 ok, 1 failure, 2 preflight failed, 3 invalid profile, 4 journal locked by another run,
5 journal integrity failure (an entry edited or removed, or the journal truncated, rolled back or
extended outside bootstrap: run refuses it, status and report show it).`,
		SilenceUsage:      true,
		SilenceErrors:     true,
		PersistentPreRunE: func(*cobra.Command, []string) error { return g.check() },
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	pf := root.PersistentFlags()
	pf.StringVarP(&g.file, "file", "f", "", "site profile (site.yaml)")
	pf.StringVar(&g.dir, "dir", "", "work dir (default: .bootstrap/ beside the site file)")
	pf.StringVarP(&g.output, "output", "o", "text", "output format: text or json")

	root.AddCommand(newVersionCmd(g))
	addCommands(root, g)
	return root
}

func (g *globals) check() error {
	switch g.output {
	case "text", "json":
	default:
		return usageError{fmt.Errorf("--output %q: use text or json", g.output)}
	}
	return nil
}

// Execute runs the CLI and returns the process exit code.
func Execute(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := NewRootCmd(stdout, stderr)
	stderr = root.ErrOrStderr() // scrubbed
	root.SetArgs(args)
	root.SetIn(stdin)
	err := root.Execute()
	if err == nil {
		return 0
	}
	// An invalid profile's problems were printed, each with file:line:col, by the command.
	if !silent(err) && !site.IsInvalid(err) {
		fmt.Fprintf(stderr, "error: %v\n", err)
	}
	return exitCode(err)
}

// isTerminal reports whether w is a terminal (progress bars are drawn only there).
func isTerminal(w io.Writer) bool { return progress.IsTerminal(w) }
