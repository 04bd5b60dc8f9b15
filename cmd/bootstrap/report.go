package main

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
	"github.com/bootstrap-dev/bootstrap/internal/report"
	"github.com/bootstrap-dev/bootstrap/internal/site"
	"github.com/bootstrap-dev/bootstrap/internal/stages"
)

func newReportCmd(g *globals) *cobra.Command {
	var format, out string
	cmd := &cobra.Command{
		Use:   "report [-o md|json|html] [--out FILE]",
		Short: "Write the evidence report: stages, steps, digests, files generated, journal integrity",
		Long: `Write the evidence a regulated customer asks for, from the journal and the work dir: every
run and every attempt of every stage (failed, killed and resumed ones too) with its times and
result, each step's recorded data, preflight results, the images mirrored with their digests, the
BMC actions per node attributed to the attempt that did them, the manifests applied and the files
generated with their SHA-256, tool and peer versions, and whether the journal's hash chain
verifies. Exit 6 when it does not. The HTML is one self-contained file (no scripts, no fetches).

-o picks the format (md by default; --format is the same flag's older name). With -o json the
report is the data of the one result line, as every command's -o json output ends; with --out
the file holds the report and the result line says where it is.`,
		Example: `  bootstrap report -f site.yaml                              # Markdown on stdout
  bootstrap report -f site.yaml -o html --out evidence.html
  bootstrap report -f site.yaml -o json | jq .data.chain`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := g.workDir()
			if err != nil {
				return err
			}
			if !cmd.Flags().Changed("format") && cmd.Flags().Changed("output") {
				format = g.output // -o md|json|html
			}
			if format == "json" && out == "" {
				g.output = "json" // --format json on stdout keeps the -o json contract: one result line
			}
			name := ""
			var s *site.Site
			if g.file != "" {
				if s, err = g.loadSite(); err != nil {
					return err // -f names the work dir: a wrong profile would report another site's
				}
				name = s.Metadata.Name
			}
			// With the profile the summary names each node's role, MACs and root disk.
			rep, err := report.Build(&pipeline.Runner{Stages: stages.All(), WorkDir: dir, Site: s}, name)
			if err != nil {
				return err
			}
			switch format {
			case "md", "markdown", "json", "html":
			default:
				return usageError{fmt.Errorf("-o %q: use md, json or html", format)}
			}
			w := g.stdout
			if out == "" && format == "json" {
				setResult(cmd, rep) // the report is the result line's data
				w = io.Discard
			} else if out != "" && g.json() {
				setResult(cmd, map[string]string{"file": out, "format": format})
			}
			if out != "" {
				f, err := os.OpenFile(out, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
				if err != nil {
					return err
				}
				defer f.Close()
				w = f
			}
			// rendered whole, then scrubbed in one piece (templates write value by value)
			dst, buf := w, &bytes.Buffer{}
			w = buf
			switch format {
			case "md", "markdown":
				err = rep.Markdown(w)
			case "json":
				err = rep.JSON(w)
			case "html":
				err = rep.HTML(w)
			}
			if err == nil {
				_, err = dst.Write(g.scrub.Bytes(buf.Bytes()))
			}
			if err != nil {
				return err
			}
			if !rep.Chain.Verified {
				return integrityError{fmt.Errorf("journal integrity: %s", rep.Chain.Error)}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "md", "md, json or html (the same as -o)")
	cmd.Flags().StringVar(&out, "out", "", "write to this file instead of standard output")
	return cmd
}
