package main

import (
	"errors"
	"fmt"
	"os/signal"
	"sort"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/bootstrap-dev/bootstrap/internal/agentiso"
	"github.com/bootstrap-dev/bootstrap/internal/finding"
	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
	"github.com/bootstrap-dev/bootstrap/internal/site"
	"github.com/bootstrap-dev/bootstrap/internal/stages"
)

// newISOCmd is `bootstrap iso`: the iso stage on its own, outside the journal.
func newISOCmd(g *globals) *cobra.Command {
	var manifestsOnly bool
	cmd := &cobra.Command{
		Use:   "iso",
		Short: "Render install-config, agent-config and day-1 manifests, and build the agent ISO",
		Long: `Checks the profile for what the agent-based installer would reject, writes install-config.yaml,
agent-config.yaml and openshift/ (day-1 manifests) into the work dir and, unless --manifests-only,
runs openshift-install agent create image and prepares the per-node ISO views.

--manifests-only writes the files for review, change control or CI, and builds nothing. This
command is not journaled; ` + "`bootstrap run --until iso`" + ` runs the same stage in the pipeline.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := g.loadSite()
			if err != nil {
				return err
			}
			work, err := g.workDir()
			if err != nil {
				return err
			}
			release, err := lockWork(work, "iso")
			if err != nil {
				return err
			}
			defer release()
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			env := &pipeline.Env{Site: s, WorkDir: work, Events: lineSink(g)}
			out, err := stages.ISO{ManifestsOnly: manifestsOnly}.Run(ctx, env)
			var verr *agentiso.ValidationError
			if errors.As(err, &verr) {
				// The same shape as validate's: file:line:col, field, message; exit 3.
				if err := isoProblems(s, verr.Problems).Format(g.stderr); err != nil {
					return err
				}
				return silentError{code: exitInvalid}
			}
			if err != nil {
				return err
			}
			return printISOOutput(g, out.(*stages.ISOOutput))
		},
	}
	cmd.Flags().BoolVar(&manifestsOnly, "manifests-only", false, "write the configs and openshift/ without building the ISO")
	return cmd
}

// lineSink prints events as plain lines on stderr (JSON objects with --output json).
func lineSink(g *globals) pipeline.Sink {
	return func(e pipeline.Event) {
		if j := jsonOut(g.cmd); j != nil {
			j.encode(e)
			return
		}
		node := ""
		if e.Node != "" {
			node = " [" + e.Node + "]"
		}
		switch e.Kind {
		case pipeline.Progress:
			fmt.Fprintf(g.stderr, "%s%s: %d/%d %s\n", e.Stage, node, e.Current, e.Total, e.Unit)
		case pipeline.Warning:
			fmt.Fprintf(g.stderr, "warning: %s\n", e.Message)
		default:
			fmt.Fprintf(g.stderr, "%s%s: %s\n", e.Stage, node, e.Message)
		}
	}
}

func printISOOutput(g *globals, o *stages.ISOOutput) error {
	if g.json() {
		setResult(g.cmd, o)
		return nil
	}
	paths := make([]string, 0, len(o.Files))
	for p := range o.Files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		fmt.Fprintf(g.stdout, "%s  %s\n", o.Files[p], p)
	}
	if o.Build != nil {
		fmt.Fprintf(g.stdout, "%s  %s (%d bytes, openshift-install %s)\n", o.Build.SHA256, o.Build.ISO, o.Build.Size, o.Build.InstallerVersion)
		names := make([]string, 0, len(o.Nodes))
		for n := range o.Nodes {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintf(g.stdout, "%-20s %s\n", n, o.Nodes[n].URL)
		}
	}
	return nil
}

// isoProblems turns the iso stage's checks into profile problems, each at the position of its
// field in the profile.
func isoProblems(s *site.Site, in finding.List) finding.List {
	ps := make(finding.List, 0, len(in))
	for _, p := range in {
		msg := p.Message
		if p.Node != "" {
			msg = fmt.Sprintf("node %s: %s", p.Node, msg)
		}
		ps = append(ps, finding.Finding{Position: s.At(p.Path), Path: p.Path, Status: finding.Fail, Message: msg})
	}
	ps.Sort()
	return ps
}
