package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/bootstrap-dev/bootstrap/internal/finding"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// newValidateCmd builds `bootstrap validate`: strict decoding plus every semantic check, all
// problems printed at once with file:line:column, field path and remedy. An invalid profile
// returns a *site.Errors (site.IsInvalid reports true), which the root maps to exit code 3.
func newValidateCmd() *cobra.Command {
	var allowMissing bool
	cmd := &cobra.Command{
		Use:   "validate [-f FILE | FILE]",
		Short: "Check a site profile: schema and semantics, every problem at once",
		Long: `Check a site profile without touching anything: unknown fields, types, networks,
VIPs, node counts, MACs, root devices, nmstate, referenced files and secret file modes.
Every problem is printed with file:line:column, the field path and how to fix it.
Exit code 3 when the profile is invalid; warnings alone do not fail.`,
		Example: `  bootstrap validate -f site.yaml
  bootstrap validate --allow-missing-files site.yaml   # review away from the jump host
  bootstrap validate -f site.yaml --output json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			file := profilePath(cmd, args)
			opts := []site.Option{site.RefusePlaceholders()}
			if allowMissing {
				opts = append(opts, site.MissingFilesAsWarnings())
			}
			// Every problem at once: unknown fields and duplicate keys do not stop the checks.
			s, ps, err := site.LoadValidated(file, opts...)
			if err != nil && ps == nil {
				var ok bool
				if ps, ok = site.AsProblems(err); !ok {
					return inputError{err} // not there, unreadable: input that cannot be used (exit 3)
				}
			}
			var note string
			if s != nil && !ps.HasErrors() {
				// the installer's own verdict on what iso would render, where the check binary is
				var more finding.List
				more, note = installerVerdict(cmd.Context(), s)
				ps = append(ps, more...)
			}
			var chosen []site.Chosen
			if s != nil && !ps.HasErrors() {
				chosen = s.Chosen() // named once the profile is valid: the values a run will use
			}
			if err := printProblems(cmd, file, ps, chosen, note); err != nil {
				return err
			}
			return site.Invalid(ps)
		},
	}
	cmd.Flags().StringP("file", "f", "site.yaml", "the site profile")
	cmd.Flags().BoolVar(&allowMissing, "allow-missing-files", false,
		"report referenced files that do not exist as warnings (for reviewing a profile away from the jump host)")
	return cmd
}

// validateReport is the data of validate's -o json result line; each problem is a line of its
// own before it ({"kind":"problem",...}).
type validateReport struct {
	File     string `json:"file"`
	Valid    bool   `json:"valid"`
	Errors   int    `json:"errors"`
	Warnings int    `json:"warnings"`
	// Defaults are the values bootstrap chose for the fields the profile leaves out (a valid
	// profile only).
	Defaults []site.Chosen `json:"defaults,omitempty"`
	// Installer says whether the installer's own checks ran on the profile and what they said.
	Installer string `json:"installer,omitempty"`
}

// jsonProblems writes one "problem" line per problem and leaves the summary as the result.
func jsonProblems(cmd *cobra.Command, j *jsonLines, file string, ps finding.List, chosen []site.Chosen, note string) {
	for _, p := range ps {
		j.line("problem", p)
	}
	errs, warns := ps.Count()
	setResult(cmd, validateReport{File: file, Valid: errs == 0, Errors: errs, Warnings: warns, Defaults: chosen, Installer: note})
}

func printProblems(cmd *cobra.Command, file string, ps finding.List, chosen []site.Chosen, note string) error {
	out := cmd.OutOrStdout()
	if j := jsonOut(cmd); j != nil {
		jsonProblems(cmd, j, file, ps, chosen, note)
		return nil
	}
	if len(ps) == 0 {
		if _, err := fmt.Fprintf(out, "%s: valid\n", file); err != nil {
			return err
		}
	} else if err := ps.Format(out); err != nil {
		return err
	}
	if err := printChosen(out, chosen); err != nil {
		return err
	}
	if note != "" {
		_, err := fmt.Fprintln(out, note)
		return err
	}
	return nil
}

// printChosen names the values bootstrap chose for what the profile leaves out.
func printChosen(out io.Writer, chosen []site.Chosen) error {
	if len(chosen) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString("defaults chosen for what the profile leaves out (write a field to choose otherwise):\n")
	for _, c := range chosen {
		fmt.Fprintf(&b, "  %s\n", c)
	}
	_, err := io.WriteString(out, b.String())
	return err
}

// profilePath picks the profile: a positional argument, else -f given to this command, else a
// -f/--file given to the root (the global flag), else site.yaml.
func profilePath(cmd *cobra.Command, args []string) string {
	if len(args) == 1 {
		return args[0]
	}
	if f := cmd.Flags().Lookup("file"); f != nil && f.Changed {
		return f.Value.String()
	}
	if f := cmd.Root().PersistentFlags().Lookup("file"); f != nil && f.Changed {
		return f.Value.String()
	}
	if f := cmd.Flags().Lookup("file"); f != nil && f.Value.String() != "" {
		return f.Value.String()
	}
	return "site.yaml"
}

// flagValue reads a flag this command may inherit from the root (--output), "" when none.
func flagValue(cmd *cobra.Command, name string) string {
	if f := cmd.Flags().Lookup(name); f != nil {
		return f.Value.String()
	}
	if f := cmd.Root().PersistentFlags().Lookup(name); f != nil {
		return f.Value.String()
	}
	return ""
}
