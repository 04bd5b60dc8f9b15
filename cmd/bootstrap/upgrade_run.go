package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/bootstrap-dev/bootstrap/internal/cluster"
	"github.com/bootstrap-dev/bootstrap/internal/fsroot"
	"github.com/bootstrap-dev/bootstrap/internal/mirror"
	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
	"github.com/bootstrap-dev/bootstrap/internal/progress"
	"github.com/bootstrap-dev/bootstrap/internal/site"
	"github.com/bootstrap-dev/bootstrap/internal/stages"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade"
)

// addUpgradeRunCmds adds `upgrade preflight` and `upgrade run` (day-2, part 2).
func addUpgradeRunCmds(up *cobra.Command, g *globals) {
	up.AddCommand(newUpgradePreflightCmd(g), newUpgradeRunCmd(g))
}

// upgradeFlags are what preflight and run share.
type upgradeFlags struct {
	plan, kubeconfig string
}

func (f *upgradeFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.plan, "plan", "", "the plan `bootstrap upgrade plan -o json` wrote")
	cmd.Flags().StringVar(&f.kubeconfig, "kubeconfig", "", "the cluster (default: the work dir's kubeconfig)")
}

func (f *upgradeFlags) load(g *globals) (*upgrade.Plan, *cluster.Client, error) {
	if f.plan == "" {
		return nil, nil, usageError{errors.New("--plan FILE is required: write it with bootstrap upgrade plan --to VERSION -o json > plan.json")}
	}
	b, err := fsroot.ReadFile(f.plan, fsroot.Plan) // a plain file within the plan's cap, never a FIFO
	if err != nil {
		return nil, nil, usageError{fmt.Errorf("--plan: %w", err)}
	}
	p, err := upgrade.ParsePlan(b) // the -o json lines of upgrade plan, or the plan alone
	if err != nil {
		return nil, nil, usageError{fmt.Errorf("--plan %s: %w", f.plan, err)}
	}
	kc := f.kubeconfig
	if kc == "" {
		dir, err := g.workDir()
		if err != nil {
			return nil, nil, err
		}
		kc = filepath.Join(dir, "kubeconfig")
	}
	c, err := cluster.NewFromKubeconfig(kc)
	return p, c, err
}

func newUpgradePreflightCmd(g *globals) *cobra.Command {
	var f upgradeFlags
	cmd := &cobra.Command{
		Use:   "preflight --plan FILE [-f site.yaml] [--kubeconfig FILE] [--canary-pool NAME]",
		Short: "Read-only checks before a hop: versions, operators, Upgradeable, admin-acks, pools, nodes, PDBs, MachineHealthChecks",
		Long: `preflight reads the cluster and changes nothing: ClusterVersion Available, not Failing, not
Progressing, not Upgradeable=False; every ClusterOperator available, not degraded, its Upgradeable
condition; the admin-acks the plan's first hop needs; every MachineConfigPool updated, not degraded,
not paused; every node Ready; PodDisruptionBudgets allowing 0 disruptions (they block a drain) and
MachineHealthChecks (pause them) named as warnings. Each result names its object. Our canary pool
is --canary-pool, else the profile's upgrade.canaryPool (-f site.yaml), else ` + site.DefaultCanaryPool + `.
Exit codes: 0 pass (warnings allowed), 2 a check failed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var o upgrade.RunOptions // the canary pool: --canary-pool, else the profile's upgrade.canaryPool
			if _, err := runSettings(cmd, g, &o, false); err != nil {
				return err
			}
			p, c, err := f.load(g)
			if err != nil {
				return err
			}
			v, err := upgrade.ReadView(cmd.Context(), c, time.Now())
			if err != nil {
				return err
			}
			if err := p.CheckCurrent(v.CV.History); err != nil {
				return refused(cmd, g, err)
			}
			var acks []string
			for _, a := range p.Hops[0].Acks {
				acks = append(acks, a.Key)
			}
			fs, err := upgrade.Preflight(cmd.Context(), c, v, upgrade.PreflightOptions{CanaryPool: o.CanaryPool, Acks: acks, Hops: p.Hops})
			if err != nil {
				return err
			}
			if g.json() {
				setResult(cmd, map[string]any{"findings": fs})
			} else {
				for _, x := range fs {
					fmt.Fprintf(g.stdout, "%-4s  %-20s  %-45s  %s\n", strings.ToUpper(x.Result), x.Check, x.Object, x.Message)
				}
			}
			if upgrade.Failed(fs) {
				return silentError{code: exitPreflight}
			}
			return nil
		},
	}
	f.add(cmd)
	addCanaryPoolFlag(cmd.Flags())
	return cmd
}

func newUpgradeRunCmd(g *globals) *cobra.Command {
	var f upgradeFlags
	var o upgrade.RunOptions
	var from, until, sigDir, mirrorDir, accepted string
	var bk backupFlags
	cmd := &cobra.Command{
		Use:   "run --plan FILE [-f site.yaml] [--kubeconfig FILE] [--from hop-V] [--until hop-V] [--canary NODE] [--soak D] [--max-unavailable N|P%] [--signatures DIR] [--accept-rollback-contract NAME]",
		Short: "Run the plan's hops, canary first, journaled and resumable; stop and explain on the product's thresholds",
		Long: `run takes each hop of the plan in turn (a stage hop-<version> of the upgrade journal,
upgrade/journal.jsonl in the work dir; --from/--until select hops): preflight, the hop's signature
ConfigMaps (--signatures DIR, *.yaml), a canary pool holding one worker (--canary, default the
first worker), the other pools paused, spec.desiredUpdate set to the version and the image by
digest (never force; journaled before and after, and on resume read back from the cluster so it
is never set twice), then it watches the ClusterVersion history to Completed, the operators at
the version, the master pool, the canary node to Done and its evidence (a new OS build; on a GPU
node the GPU operator's driver pod for that build Ready; the --blacklist modules still blacklisted
in its rendered config); soaks (--soak); unpauses the rest; closes (canary pool removed). The
InstallPlans waiting for approval are approved only when every CSV they name is one the plan's
operator steps name (before the hop those it puts before, after it those after); any other
stays unapproved and is named in the journal. The run then waits until each CSV the step names is
installed (Succeeded, the Subscription at it), at most 20 minutes, and stops and says why when one
is not. After the updates before the hop, each Subscription the plan moves to the next minor's
CatalogSource (cs-<catalog>-v4-18 -> cs-<catalog>-v4-19) is read, and patched only when not
already there and its target is READY; otherwise the run stops and says why.

Before anything of a hop changes the cluster, the hop's etcd backup is taken: the cluster's
backup script runs on the control-plane node --backup-node NAME=ADDRESS over SSH (user
--ssh-user, key --ssh-key, the host key pinned in the work dir's known_hosts as gather does),
into --backup-dir/<version> there; the snapshot and the static resources are copied to
upgrade/backups/<version> and journaled with their SHA-256. Without a backup node the run refuses
unless --no-etcd-backup REASON says why the hop goes without one.

It stops on the thresholds oc adm upgrade status uses — an operator unavailable 20 minutes,
degraded 40, progressing over 30 (machine-config 90), a drain failing for an hour,
ReleaseAccepted=False, Failing=True — with one sentence (cause, object, remedy); no step is taken
after a trip and the paused pools stay paused. Run again to resume.

The soak, maxUnavailable, canary and canary pool come from the site profile's upgrade section
(-f site.yaml) when it gives them; a flag given on the command line overrides the profile, and
the defaults (soak ` + site.DefaultUpgradeSoak + `, each pool's own maxUnavailable, the first worker,
pool ` + site.DefaultCanaryPool + `) fill the rest. Each value and where it came from (the flag, the
profile's file:line:col, or the default) is printed and journaled as the hop's settings step.

The rollback contract of each hop is printed first; it must be accepted (by name) with
--accept-rollback-contract NAME or by typing the name when asked, and is journaled.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			settings, err := runSettings(cmd, g, &o, true) // the inputs first: a bad value is refused before the cluster is read
			if err != nil {
				return err
			}
			p, c, err := f.load(g)
			if err != nil {
				return err
			}
			v, err := upgrade.ReadView(cmd.Context(), c, time.Now())
			if err != nil {
				return err
			}
			if err := p.CheckUnblocked(); err != nil { // written by a plan that exited 2
				return refused(cmd, g, err)
			}
			if err := p.CheckCurrent(v.CV.History); err != nil { // a plan the cluster has left
				return refused(cmd, g, err)
			}
			if sigDir != "" {
				files, err := filepath.Glob(filepath.Join(sigDir, "*.yaml"))
				if err != nil {
					return err
				}
				objs, err := cluster.ReadFiles(files...)
				if err != nil {
					return err
				}
				for _, u := range objs { // the mirror's outputs hold its IDMS, CatalogSources, updateService.yaml too
					if _, ok := u.GetLabels()[mirror.SignatureLabel]; ok && u.GetKind() == "ConfigMap" {
						o.Signatures = append(o.Signatures, u)
					}
				}
				if len(o.Signatures) == 0 {
					return usageError{fmt.Errorf("--signatures %s: no ConfigMap labelled %s in its *.yaml: mirror the plan's releases with --signature-store, or give the directory the mirror wrote signature-configmap.yaml into", sigDir, mirror.SignatureLabel)}
				}
			}
			if mirrorDir != "" {
				files, err := filepath.Glob(filepath.Join(mirrorDir, "*.yaml"))
				if err != nil {
					return err
				}
				objs, err := cluster.ReadFiles(files...)
				if err != nil {
					return err
				}
				for _, u := range objs { // the mirror's outputs hold other files too (updateService.yaml, signatures)
					if k := u.GetKind(); k == "ImageDigestMirrorSet" || k == "ImageTagMirrorSet" || k == "CatalogSource" {
						o.Mirror = append(o.Mirror, u)
					}
				}
			}
			for _, h := range p.Hops {
				fmt.Fprintln(g.stderr, upgrade.Contract(h, ""))
			}
			if accepted == "" {
				accepted = confirmContract(cmd.InOrStdin(), g.stderr)
			}
			if strings.TrimSpace(accepted) == "" {
				fmt.Fprintf(g.stderr, "error: %v\n", upgrade.ErrContract)
				return silentError{code: exitInvalid}
			}
			o.AcceptedBy = accepted
			bo, err := bk.options(g, &o)
			if err != nil {
				return err
			}
			return runHops(cmd, g, c, p, o, settings, bo, pipeline.RunOptions{From: from, Until: until})
		},
	}
	f.add(cmd)
	cmd.Flags().StringVar(&from, "from", "", "first hop to run (hop-<version>)")
	cmd.Flags().StringVar(&until, "until", "", "last hop to run (hop-<version>)")
	addSettingFlags(cmd.Flags())
	cmd.Flags().DurationVar(&o.Poll, "poll", 10*time.Second, "how often the cluster is read while watching")
	cmd.Flags().StringSliceVar(&o.Blacklist, "blacklist", []string{"irdma"}, "kernel modules the canary's rendered config must still blacklist after the update (the day-1 blacklist; empty to skip)")
	cmd.Flags().StringVar(&o.GPUNamespace, "gpu-namespace", upgrade.DefaultGPUNamespace, "the GPU operator's namespace (its driver pods are the GPU canary's evidence)")
	cmd.Flags().StringVar(&mirrorDir, "mirror-config", "", "the mirror's outputs directory: its ImageDigestMirrorSets, ImageTagMirrorSets and CatalogSources (*.yaml) are applied before the InstallPlans")
	cmd.Flags().StringVar(&sigDir, "signatures", "", "directory of the hops' signature ConfigMaps (*.yaml), as the mirror wrote them")
	bk.add(cmd)
	cmd.Flags().StringVar(&accepted, "accept-rollback-contract", "", "NAME: the person accepting the rollback contract printed before the run")
	return cmd
}

// confirmContract asks for the accepting person's name; an empty answer refuses.
func confirmContract(in io.Reader, w io.Writer) string {
	fmt.Fprint(w, "Type the name of the person accepting this rollback contract (empty refuses): ")
	line, _ := bufio.NewReader(in).ReadString('\n')
	return strings.TrimSpace(line)
}

// runHops runs the hops as stages of the upgrade runner, with its own journal and lock in
// <work dir>/upgrade.
func runHops(cmd *cobra.Command, g *globals, c *cluster.Client, p *upgrade.Plan, o upgrade.RunOptions, settings []upgrade.Setting, bo *upgrade.BackupOptions, ro pipeline.RunOptions) error {
	dir, err := g.workDir()
	if err != nil {
		return err
	}
	dir = filepath.Join(dir, "upgrade")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	var st []pipeline.Stage
	for i, h := range p.Hops {
		ho := o
		ho.Hop = h
		if i > 0 { // the hop waits for the operator updates the plan puts after the one before
			ho.Previous = &p.Hops[i-1]
		}
		if bo != nil {
			ho.Backup = forHop(*bo, h.To, dir)
			ho.AfterBackup = forHop(*bo, h.To+"-after", dir)
		}
		for _, a := range h.Acks {
			ho.Acks = append(ho.Acks, a.Key)
		}
		st = append(st, &stages.UpgradeHop{Client: c, Options: ho, Settings: settings})
	}
	w, format := g.stderr, progress.Auto
	if g.json() {
		w, format = g.stdout, progress.JSON
	}
	rend, err := progress.New(w, format)
	if err != nil {
		return err
	}
	defer rend.Close()
	r := &pipeline.Runner{Stages: st, WorkDir: dir, Sink: rend.Handle, Log: slog.New(slog.DiscardHandler),
		Command: "upgrade run", Version: buildInfo().Version}
	if err := r.CheckRun(ro); err != nil {
		return usageError{err}
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	err = r.Run(ctx, ro)
	var trip *upgrade.Trip
	switch {
	case err == nil:
		fmt.Fprintln(g.stdout, "done: every hop of the plan completed")
		return nil
	case errors.As(err, &trip):
		fmt.Fprintf(g.stderr, "stopped: %s\n", trip.Sentence())
		if trip.Gathered != nil {
			fmt.Fprintf(g.stderr, "gathered: %s (%d files; not read: %d)\n", trip.Gathered.Dir, len(trip.Gathered.Files), len(trip.Gathered.Missing))
		}
		return silentError{code: exitFailure}
	}
	var pe *upgrade.PreflightError
	if errors.As(err, &pe) {
		for _, x := range pe.Findings {
			if x.Result == upgrade.Fail {
				fmt.Fprintf(g.stderr, "FAIL  %s: %s\n", x.Object, x.Message)
			}
		}
		return silentError{code: exitPreflight}
	}
	return err
}
