package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/bootstrap-dev/bootstrap/internal/cluster"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade"
)

// newUpgradeCmd is `bootstrap upgrade`: day-2 updates of the cluster (today: plan).
func newUpgradeCmd(g *globals) *cobra.Command {
	up := &cobra.Command{
		Use:   "upgrade",
		Short: "Day-2: plan an OpenShift update offline from the carried update graph",
		Args:  cobra.NoArgs,
	}
	up.AddCommand(newUpgradePlanCmd(g))
	addUpgradeRunCmds(up, g)
	return up
}

func newUpgradePlanCmd(g *globals) *cobra.Command {
	var to, statePath, graphDir, arch, kubeconfig, saveState, iscOut string
	var accept []string
	cmd := &cobra.Command{
		Use:   "plan --to VERSION --graph DIR (--state FILE | --kubeconfig FILE | -f site.yaml) [--accept-risk NAME=PERSON] [-o table|json]",
		Short: "Compute an upgrade path one minor per hop, its risks, operator steps, acks and what to carry",
		Long: `plan reads the update graph the mirror carried (--graph DIR: cincinnati/<channel>-<arch>.json,
graph-data/, catalogs/<minor>/<CatalogSource>/, content.json) and a captured cluster state (--state:
the List printed by oc get clusterversion,clusterserviceversions,subscriptions,nodes,
machineconfigpools -A -o yaml, with the admin-gates and admin-acks ConfigMaps and a ClusterPolicy
when there are; without --state the same objects are read, read-only, from the cluster of
--kubeconfig or of the work dir's kubeconfig, and --save-state keeps them), and prints the plan: hops one minor at a time (the cluster-version operator
refuses more), each with its payload digest, channel, edge kind and risks, the compatibility gate
of installed operators with the source of each verdict, the operator steps before and after, the
admin-acks, and the images to carry. Nothing is changed; the same inputs print the same plan.

--isc FILE writes the delta to mirror: an ImageSetConfiguration of what the plan needs that the
carried content.json lacks (the hops' releases, each alone; the planned bundles' channels; the
driver images); releases not carried are then planned through instead of refused.

A conditional update's risk is decided from the cluster's objects when its rule is the
csv_succeeded shape (an installed operator); any other risk is taken only when a person accepted
it: --accept-risk NAME=PERSON, recorded in the plan.

Exit codes: 0 a plan without blockers; 2 a plan whose gate blocks a hop (printed, blockers
listed); 3 no plan from these inputs (unknown or older target, no path, a release not carried,
a graph file truncated or not hashing to content.json, an unreadable state), the reason and
the ImageSetConfiguration lines that would bring what is missing on stderr.`,
		Args: cobra.NoArgs,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			if g.output == "table" { // -o table is the text output here
				g.output = "text"
			}
			return cmd.Root().PersistentPreRunE(cmd, args)
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			if to == "" || graphDir == "" || statePath == "" && kubeconfig == "" && g.file == "" {
				return usageError{errors.New("upgrade plan needs --to VERSION, --graph DIR and the cluster: --state FILE, --kubeconfig FILE or -f site.yaml (its work dir's kubeconfig)")}
			}
			if g.file != "" { // the site is validated like every command's (exit 3 when invalid)
				if _, err := g.loadSite(); err != nil {
					return err
				}
			}
			o := upgrade.Options{To: to, Accept: map[string]string{}, AllowMissing: iscOut != ""}
			for _, a := range accept {
				name, person, ok := strings.Cut(a, "=")
				if !ok || strings.TrimSpace(name) == "" || strings.TrimSpace(person) == "" {
					return refused(cmd, g, &upgrade.Refusal{Reason: upgrade.ReasonAcceptance,
						Msg: fmt.Sprintf("--accept-risk %q: want NAME=PERSON", a), Fix: "name the risk and the person who accepted it: --accept-risk GPUOperatorRisk='Jane Doe'"})
				}
				o.Accept[strings.TrimSpace(name)] = strings.TrimSpace(person)
			}
			st, err := readState(cmd, g, statePath, kubeconfig, saveState)
			if err != nil {
				return refused(cmd, g, err)
			}
			if arch == "" {
				arch = st.Arch
			}
			c, err := upgrade.Load(graphDir, arch)
			if err != nil {
				return refused(cmd, g, err)
			}
			p, err := upgrade.Compute(c, st, o)
			if err != nil {
				return refused(cmd, g, err)
			}
			if iscOut != "" {
				b, notes, err := upgrade.Delta(p, c)
				if err != nil {
					return err
				}
				if err := os.WriteFile(iscOut, b, 0o644); err != nil {
					return err
				}
				for _, n := range notes {
					fmt.Fprintf(g.stderr, "warning: %s\n", n)
				}
				fmt.Fprintf(g.stderr, "the delta to mirror is in %s: bootstrap mirror -c %s file://DIR\n", iscOut, iscOut)
			}
			if g.json() {
				setResult(cmd, p)
			} else if err := p.WriteTable(g.stdout); err != nil {
				return err
			}
			if len(p.Blockers) > 0 {
				if !g.json() {
					fmt.Fprintf(g.stderr, "error: the plan has %d blocker(s): resolve them (listed above) and plan again\n", len(p.Blockers))
				}
				return silentError{code: exitPreflight}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&to, "to", "", "target release version (4.18.30)")
	f.StringVar(&statePath, "state", "", "captured cluster state (YAML or JSON List)")
	f.StringVar(&graphDir, "graph", "", "the carried update graph directory")
	f.StringVar(&kubeconfig, "kubeconfig", "", "read the state from this cluster (default with -f: the work dir's kubeconfig)")
	f.StringVar(&saveState, "save-state", "", "write the state read from the cluster to this file (a --state file)")
	f.StringVar(&iscOut, "isc", "", "write the ImageSetConfiguration of what the plan needs and the carry lacks to this file")
	f.StringVar(&arch, "arch", "", "graph architecture (default: the cluster's, from the state)")
	f.StringArrayVar(&accept, "accept-risk", nil, "NAME=PERSON: PERSON accepted the conditional update risk NAME (repeatable)")
	return cmd
}

// readState reads --state, or captures the state from the cluster (--kubeconfig, else the work
// dir's kubeconfig), saving it to saveState when asked.
func readState(cmd *cobra.Command, g *globals, statePath, kubeconfig, saveState string) (*upgrade.State, error) {
	if statePath != "" {
		return upgrade.ReadState(statePath)
	}
	if kubeconfig == "" {
		dir, err := g.workDir()
		if err != nil {
			return nil, err
		}
		kubeconfig = filepath.Join(dir, "kubeconfig")
	}
	c, err := cluster.NewFromKubeconfig(kubeconfig)
	if err != nil {
		return nil, err
	}
	st, list, err := upgrade.Capture(cmd.Context(), c)
	if err != nil {
		return nil, err
	}
	if saveState != "" {
		if err := os.WriteFile(saveState, list, 0o644); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// refused shows a refusal (its reason and remedy) and exits 3; other errors pass through.
func refused(cmd *cobra.Command, g *globals, err error) error {
	var r *upgrade.Refusal
	if !errors.As(err, &r) {
		return err
	}
	if g.json() {
		setResult(cmd, map[string]any{"refusal": r})
	} else {
		fmt.Fprintf(g.stderr, "error: %v\n", r)
		if r.Remedy() != "" {
			fmt.Fprintf(g.stderr, "remedy: %s\n", r.Remedy())
		}
	}
	return silentError{code: exitInvalid}
}
