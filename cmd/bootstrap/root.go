package main

import (
	"context"
	"fmt"
	"github.com/bootstrap-dev/bootstrap/internal/isoserver"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
	"github.com/bootstrap-dev/bootstrap/internal/progress"
	"github.com/bootstrap-dev/bootstrap/internal/redact"
	"github.com/bootstrap-dev/bootstrap/internal/site"
	"github.com/bootstrap-dev/bootstrap/internal/stages"
)

// globals are the flags every command shares.
type globals struct {
	file   string         // -f/--file: the site profile
	dir    string         // --dir: the work dir
	output string         // --output: text or json
	cmd    *cobra.Command // the command running (set before it runs)

	// stdout and stderr pass through scrub, which learns the site's secrets when a command
	// loads the profile.
	stdout, stderr io.Writer
	scrub          *redact.Scrubber

	acceptTail bool // run/replay --accept-journal-tail

	logLevel  string // --log-level
	verbosity int    // -v N, as oc's

	// pipeline is the stages run and replay drive, sharing the session's ISO server (nil: the
	// real ones, stages.WithISOServer; tests drive the console with stages of their own).
	pipeline func(*isoserver.Server) []pipeline.Stage
	// scope is the stages run selects (nil: every stage), handed to the preflight stage.
	scope     []string
	fromStart bool // run's window begins with the first stage
}

// stageList is the pipeline's stages.
func (g *globals) stageList(iso *isoserver.Server) []pipeline.Stage {
	if g.pipeline != nil {
		return withScope(g.pipeline(iso), g.scope)
	}
	if iso == nil {
		return withScope(stages.All(), g.scope)
	}
	return withScope(stages.WithISOServer(iso), g.scope)
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
	root, _ := newRoot(stdout, stderr)
	return root
}

func newRoot(stdout, stderr io.Writer) (*cobra.Command, *globals) {
	sc := redact.New()
	stdout, stderr = sc.Writer(stdout), sc.Writer(stderr)
	g := &globals{stdout: stdout, stderr: stderr, scrub: sc}
	root := &cobra.Command{
		Use:   "bootstrap",
		Short: "Take a site from bare metal to a GitOps-managed OpenShift cluster, resumably",
		Long: `bootstrap runs one resumable pipeline from bare Dell PowerEdge metal to a running,
GitOps-managed OpenShift cluster on an air-gapped site. Every step is recorded in an append-only,
hash-chained journal (.bootstrap/journal.jsonl); any run can be stopped anywhere and continued.

Exit codes: 0 ok, 1 failure (also a usage error), 2 preflight failed, 3 invalid input (a profile
missing, unreadable or invalid; an invalid ImageSetConfiguration), 4 journal locked by another run,
5 gather wrote its tarball but some sources failed (listed in its index), 6 journal integrity
failure (an entry edited or removed, or the journal truncated, rolled back or extended outside
bootstrap: run refuses it, status and report show it), 130 interrupted (Ctrl-C, SIGTERM).

-v N is log verbosity as oc's (4 or more: debug), the same as --log-level; --version prints the version.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if j, ok := cmd.Context().Value(outputKey{}).(*jsonLines); ok {
				j.command = commandName(cmd)
			}
			g.cmd = cmd
			// a command given an auth file (mirror --authfile) has its credentials scrubbed too
			if f := cmd.Flags().Lookup("authfile"); f != nil && f.Value.String() != "" {
				authFileSecrets(g.scrub, f.Value.String())
			}
			if _, err := g.level(cmd); err != nil {
				return err
			}
			return g.check(cmd)
		},
	}
	// --version prints the same line as `bootstrap version`.
	root.Version = versionString()
	root.SetVersionTemplate("{{.Version}}\n")
	root.SetOut(stdout)
	root.SetErr(stderr)
	pf := root.PersistentFlags()
	pf.StringVarP(&g.file, "file", "f", "", "site profile (site.yaml)")
	pf.StringVar(&g.dir, "dir", "", "work dir (default: .bootstrap/ beside the site file)")
	pf.StringVarP(&g.output, "output", "o", "text", "output format: text or json")
	addVerbosityFlags(root, g)

	// -v without a number: say what it is now, and where the version went.
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		if strings.Contains(err.Error(), "'v' in -v") {
			err = fmt.Errorf("%w: -v N is log verbosity, as oc's (%d or more: debug); the version is --version or `bootstrap version`",
				err, debugVerbosity)
		}
		return usageError{err}
	})
	root.AddCommand(newVersionCmd(g))
	addCommands(root, g)
	addCompletions(root, g)
	return root, g
}

func (g *globals) check(cmd *cobra.Command) error {
	switch g.output {
	case "text", "json":
	case "md", "markdown", "html":
		if cmd.Name() == "report" { // report -o md|json|html
			return nil
		}
		fallthrough
	default:
		return usageError{fmt.Errorf("--output %q: use text or json", g.output)}
	}
	return nil
}

// Execute runs the CLI and returns the process exit code.
func Execute(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root, g := newRoot(stdout, stderr)
	stdout, stderr = g.stdout, g.stderr // scrubbed
	root.SetArgs(args)
	root.SetIn(stdin)
	jl := &jsonLines{w: stdout, command: root.Name()}
	ran, err := root.ExecuteContextC(withJSONLines(context.Background(), jl))
	code := exitCode(err)
	// An invalid profile's problems were printed, each with file:line:col, by the command.
	if err != nil && !silent(err) && !site.IsInvalid(err) {
		fmt.Fprintf(stderr, "error: %v\n", err)
	}
	// mirror has its own -o; report --format json on stdout turns the contract on too.
	if ran != nil && flagValue(ran, "output") == "json" && !versionAsked(root) {
		jl.command = commandName(ran)
		jl.result(err, code)
	}
	return code
}

// isTerminal reports whether w is a terminal (progress bars are drawn only there).
func isTerminal(w io.Writer) bool { return progress.IsTerminal(w) }

// versionAsked reports whether cobra answered --version (it prints the line itself).
func versionAsked(root *cobra.Command) bool {
	f := root.Flags().Lookup("version")
	return f != nil && f.Changed
}

// commandName is the command path without the root's name ("validate", "mirror", "bootstrap"
// for the root itself).
func commandName(cmd *cobra.Command) string {
	if !cmd.HasParent() {
		return cmd.Name()
	}
	return strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
}
