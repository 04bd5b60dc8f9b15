package main

import (
	"github.com/spf13/cobra"

	"github.com/bootstrap-dev/bootstrap/internal/site"
	"github.com/bootstrap-dev/bootstrap/profiles"
)

// reportFormats are the formats report writes (-o, --format).
func reportFormats() []string { return []string{"md", "json", "html"} }

// addCompletions registers the values shell completion offers for flags across the tree: -o,
// -f (YAML files), --dir (directories), the stage flags, --node (the nodes of the profile given
// with -f) and upgrade run's --canary (its workers), init's --profile and report's --format.
func addCompletions(root *cobra.Command, g *globals) {
	fixed := func(vals ...string) cobra.CompletionFunc {
		return func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return vals, cobra.ShellCompDirectiveNoFileComp
		}
	}
	yaml := func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return []string{"yaml", "yml"}, cobra.ShellCompDirectiveFilterFileExt
	}
	dirs := func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return nil, cobra.ShellCompDirectiveFilterDirs
	}
	// nodesOf completes the profile's nodes of role (every node when empty).
	nodesOf := func(role string) cobra.CompletionFunc {
		return func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
			file := g.file
			if file == "" {
				file = "site.yaml"
			}
			s, err := site.Load(file)
			if err != nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			var names []string
			for _, n := range s.Nodes {
				if role == "" || n.Role == role {
					names = append(names, n.Name+"\t"+n.Role)
				}
			}
			return names, cobra.ShellCompDirectiveNoFileComp
		}
	}
	// -o: report has its own formats (md, json, html); every other command text or json.
	_ = root.RegisterFlagCompletionFunc("output", func(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if cmd.Name() == "report" {
			return reportFormats(), cobra.ShellCompDirectiveNoFileComp
		}
		return []string{"text", "json"}, cobra.ShellCompDirectiveNoFileComp
	})
	_ = root.RegisterFlagCompletionFunc("file", yaml)
	_ = root.RegisterFlagCompletionFunc("dir", dirs)
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		reg := func(flag string, f cobra.CompletionFunc) {
			if c.LocalNonPersistentFlags().Lookup(flag) != nil {
				_ = c.RegisterFlagCompletionFunc(flag, f)
			}
		}
		switch c.Name() {
		case "init":
			reg("profile", fixed(profiles.Names()...))
			reg("file", yaml)
		case "validate":
			reg("file", yaml)
		case "replay":
			reg("node", nodesOf(""))
		case "run": // upgrade run: the canary is a worker
			reg("canary", nodesOf(site.RoleWorker))
		case "report":
			reg("format", fixed(reportFormats()...))
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}
