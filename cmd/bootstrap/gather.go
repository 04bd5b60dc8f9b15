package main

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/bootstrap-dev/bootstrap/internal/gather"
	"github.com/bootstrap-dev/bootstrap/internal/site"
	"github.com/bootstrap-dev/bootstrap/internal/stages"
)

// newGatherCmd is `bootstrap gather`: node logs over SSH, BMC event logs over Redfish and the
// journal, into one tarball with an index. It reads the root's -f, --dir and --output flags.
func newGatherCmd(g *globals) *cobra.Command {
	var (
		out     string
		noBMC   bool
		sshPort int
	)
	cmd := &cobra.Command{
		Use:   "gather -f site.yaml [--out FILE]",
		Short: "Collect node journals and agent-gather (SSH), BMC event logs (Redfish) and the journal into one tarball",
		Long: `gather connects to every node as core with the private key beside cluster.sshKeyFile. Host keys
are recorded on first contact in the work dir's known_hosts and verified afterwards; a changed key
is refused. A source that fails is listed in the tarball's index.txt and index.json, and does not
stop the others. The install stage runs gather by itself when the install fails.

Exit codes: 0 every source collected, 5 the tarball was written but some sources failed (see its
index.txt), 1 no tarball.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			pf := cmd.Root().PersistentFlags()
			get := func(name string) string {
				if f := pf.Lookup(name); f != nil {
					return f.Value.String()
				}
				return ""
			}
			file, dir := get("file"), get("dir")
			if file == "" {
				return fmt.Errorf("no site profile: pass -f site.yaml")
			}
			s, _, err := site.LoadValidated(file, site.RefusePlaceholders())
			addSiteSecrets(g.scrub, s)
			if err != nil && !site.IsInvalid(err) {
				return inputError{err} // not there, unreadable (exit 3, as an invalid one)
			} else if err != nil {
				return err
			}
			if dir == "" {
				dir = filepath.Join(filepath.Dir(file), ".bootstrap")
			}
			if dir, err = filepath.Abs(dir); err != nil {
				return err
			}
			release, err := lockWork(dir, "gather")
			if err != nil {
				return err
			}
			defer release()
			if out == "" {
				out = filepath.Join(dir, "gather-"+time.Now().UTC().Format("20060102T150405Z")+".tar.gz")
			}
			j := jsonOut(cmd)
			progress := func(e gather.Entry) {
				if j != nil {
					j.line("source", e)
					return
				}
				status := "ok"
				if e.Error != "" {
					status = "FAILED: " + e.Error
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "%-45s %9d bytes  %s\n", e.Name, e.Bytes, status)
			}
			idx, err := stages.Gather(cmd.Context(), s, dir, out, stages.GatherOptions{SSHPort: sshPort, NoBMC: noBMC, Progress: progress, Scrub: g.scrub.Bytes})
			if err != nil {
				return err
			}
			if j != nil {
				setResult(cmd, map[string]any{"tarball": out, "index": idx})
			} else {
				fmt.Fprintf(cmd.OutOrStdout(), "%s: %d sources, %d failed (see index.txt inside)\n", out, len(idx.Entries), idx.Failed)
			}
			if idx.Failed > 0 {
				return silentError{code: exitPartial}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "tarball to write (default: <work dir>/gather-<time>.tar.gz)")
	cmd.Flags().BoolVar(&noBMC, "no-bmc", false, "skip the BMCs' system event logs")
	cmd.Flags().IntVar(&sshPort, "ssh-port", 22, "SSH port of the nodes")
	return cmd
}
