package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/bootstrap-dev/bootstrap/internal/mirror"
)

// mirrorFlags are the flags of `bootstrap mirror`, named as oc-mirror v2 names them.
type mirrorFlags struct {
	config, from, authfile, workspace, output string
	srcTLSVerify, destTLSVerify               bool
	caFile, srcCAFile, sourceRegistry         string
	signatureStore                            string
	updateURL                                 string
	dryRun, verify                            bool
	parallel, retries                         int
	archiveSize                               int   // GiB
	archiveBytes                              int64 // hidden: the archive size in bytes (tests)
	platforms                                 []string
}

// newMirrorCmd builds `bootstrap mirror`: registry to registry with oc-mirror v2's conventions.
func newMirrorCmd() *cobra.Command {
	f := &mirrorFlags{}
	cmd := &cobra.Command{
		Use:   "mirror -c isc.yaml [--from file://DIR] docker://HOST[:PORT][/NAMESPACE] | file://DIR",
		Short: "Mirror an ImageSetConfiguration into a registry, resumably, and write IDMS/ITMS/CatalogSources",
		Long: `Mirror the releases, operator catalogs and images of an oc-mirror v2 ImageSetConfiguration
(mirror.openshift.io/v2alpha1) into a registry. Shared blobs are fetched once; blobs and manifests
already at the destination are skipped, so an interrupted run continues where it stopped. Images that
still fail after retries are listed at the end and the command exits 1; the rest is mirrored.

Outputs are written to WORKSPACE/working-dir/cluster-resources under oc-mirror v2's names:
idms-oc-mirror.yaml and itms-oc-mirror.yaml (only when some image needs them), cs-*.yaml, and
with --signature-store signature-configmap.yaml/.json; bootstrap's content.json and mapping.txt
beside them.

Disk mirror: "file://DIR" on the connected side writes an OCI layout (one content-addressed blob
store; a later run into the same DIR writes only new blobs) and DIR/content.json; carry DIR across,
then "--from file://DIR docker://HOST/NS" pushes it, verifying every blob's SHA-256 before pushing.
With --archive-size GiB (or the ImageSetConfiguration's archiveSize) the layout is staged in
DIR/working-dir and packed into DIR/mirror_000001.tar, ... of at most that size (a blob is never
split; one larger than the size gets a part of its own), listed with their SHA-256 in
DIR/archive.json; a later run writes only new parts, carrying what earlier parts did not. Carry the
new parts and archive.json; "--from file://DIR" checks and extracts every part present.
Before a file:// run copies anything, the disk it needs is compared with the free space (exit 2).`,
		Example: `  bootstrap mirror -c isc.yaml docker://registry.example.com:8443/mirror
  bootstrap mirror -c isc.yaml --dry-run docker://registry.example.com:8443/mirror
  bootstrap mirror -c isc.yaml --verify docker://registry.example.com:8443/mirror
  bootstrap mirror -c isc.yaml file:///media/usb/mirror
  bootstrap mirror -c isc.yaml --from file:///media/usb/mirror docker://registry.example.com:8443/mirror`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runMirror(cmd, f, args[0]) },
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.config, "config", "c", "", "ImageSetConfiguration file (required)")
	fl.StringVar(&f.from, "from", "", "file://DIR written by a file:// run to mirror from (disk to registry)")
	fl.StringVar(&f.authfile, "authfile", "", "containers auth file for source and destination credentials")
	fl.StringVar(&f.workspace, "workspace", "file://.", "file://DIR where working-dir/cluster-resources is written")
	fl.BoolVar(&f.srcTLSVerify, "src-tls-verify", true, "verify source registry TLS; false also allows plain HTTP")
	fl.BoolVar(&f.destTLSVerify, "dest-tls-verify", true, "verify destination registry TLS; false also allows plain HTTP")
	fl.StringVar(&f.caFile, "ca-file", "", "PEM CA bundle trusted for the destination")
	fl.StringVar(&f.srcCAFile, "src-ca-file", "", "PEM CA bundle trusted for the sources")
	fl.StringVar(&f.sourceRegistry, "source-registry", "", "read every source image from this host:port instead (a proxy or lab registry)")
	fl.StringVar(&f.updateURL, "update-url", "", "update service graph URL (an OSUS route's /api/upgrades_info/v1/graph, or "+mirror.DefaultUpdateURL+"); fetches the graph of every ISC channel into cincinnati/ for bootstrap upgrade plan")
	fl.StringVar(&f.signatureStore, "signature-store", "", "URL of a release signature store; writes the signature ConfigMap the cluster version operator reads")
	fl.BoolVar(&f.dryRun, "dry-run", false, "print the plan (images, unique bytes, dedup savings, bytes present) and copy nothing")
	fl.BoolVar(&f.verify, "verify", false, "only prove that everything in content.json is at the destination")
	fl.IntVar(&f.parallel, "parallel", mirror.DefaultParallel, "concurrent blob and manifest transfers (largest first)")
	fl.IntVar(&f.retries, "retries", 3, "retries of an operation that failed with a temporary error")
	fl.IntVar(&f.archiveSize, "archive-size", 0, "file:// only: split the disk mirror into tar parts of at most this many GiB (default: the ImageSetConfiguration's archiveSize; 0 writes one OCI layout)")
	fl.Int64Var(&f.archiveBytes, "archive-size-bytes", 0, "the archive size in bytes (tests)")
	_ = fl.MarkHidden("archive-size-bytes")
	fl.StringSliceVar(&f.platforms, "platform", nil, "keep only these platforms of multi-arch images (os/arch); default all")
	fl.StringVarP(&f.output, "output", "o", "text", "text or json")
	_ = cmd.MarkFlagRequired("config")
	return cmd
}

// runMirror parses the flags into the destination, options and job the mirror stage builds
// from a site profile, and runs them through the same driver (mirror.Load, then Loaded.Plan or
// Loaded.Run, or mirror.VerifyDir); it only draws what the driver says.
func runMirror(cmd *cobra.Command, f *mirrorFlags, arg string) error {
	if f.output != "text" && f.output != "json" {
		return fmt.Errorf("--output: %q, want text or json", f.output)
	}
	dest, err := mirror.ParseDest(arg)
	if err != nil {
		return err
	}
	job, err := f.job(dest)
	if err != nil {
		return err
	}
	if job.ISC, err = loadISC(cmd, f.config); err != nil { // read (and checked) also with --from and --verify
		return err
	}
	o := f.options(dest)
	if err := o.Validate(); err != nil {
		return err
	}
	out, errOut := cmd.OutOrStdout(), cmd.ErrOrStderr()
	if !f.destTLSVerify && dest.Host != "" {
		fmt.Fprintln(errOut, "WARNING: TLS verification is off for the destination", dest.Host)
	}
	if !f.srcTLSVerify && job.FromDir == "" {
		fmt.Fprintln(errOut, "WARNING: TLS verification is off for the sources")
	}
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	if f.verify {
		return verifyMirror(ctx, cmd, out, f.output, job.OutDir, o)
	}
	loaded, err := mirror.Load(ctx, job, &o)
	if err != nil {
		if job.FromDir != "" {
			return fmt.Errorf("--from: %w", err)
		}
		return err
	}
	for _, n := range loaded.Notes() {
		if n.Warning {
			fmt.Fprintln(errOut, "WARNING:", n.Text)
		} else {
			fmt.Fprintln(errOut, n.Text)
		}
	}
	if f.dryRun {
		plan, err := loaded.Plan(ctx, o)
		if err != nil {
			return err
		}
		if f.output == "json" {
			setResult(cmd, plan)
		} else {
			printLines(out, plan.Lines())
		}
		return plan.Unresolved()
	}
	progressOut := errOut
	if f.output == "json" { // -o json: every line on stdout, the result last
		progressOut = out
	}
	o.Progress = mirrorProgress(progressOut, f.output == "json", mirrorIsTTY(errOut))
	o.DiskCheck = func(dir string, need int64) error { return mirrorDiskCheck(errOut, dir, need) }
	rep, cerr := loaded.Run(ctx, o)
	var fe *mirror.FailedError
	if cerr != nil && (rep == nil || !errors.As(cerr, &fe)) {
		return cerr
	}
	for _, w := range rep.Copy.Warnings { // a registry that refused sparse indexes: once per registry
		fmt.Fprintln(errOut, "WARNING:", w)
	}
	if f.output == "json" {
		res := map[string]any{"mirror": rep.Copy, "outputs": rep.Outputs, "outputDir": rep.Dir, "archiveParts": rep.Parts}
		if len(rep.Content.Graph) > 0 {
			res["graph"], res["updateService"] = rep.Content.Graph, rep.UpdateService
		}
		setResult(cmd, res)
		return cerr
	}
	printLines(out, rep.Lines())
	return cerr
}

// job is the mirror job of the flags: where from, where the outputs go, the archive size.
func (f *mirrorFlags) job(dest mirror.Dest) (mirror.Job, error) {
	ws, ok := strings.CutPrefix(f.workspace, "file://")
	if !ok {
		return mirror.Job{}, fmt.Errorf("--workspace %q: want file://DIR", f.workspace)
	}
	job := mirror.Job{OutDir: filepath.Join(ws, "working-dir", "cluster-resources"), SignatureStore: f.signatureStore, UpdateURL: f.updateURL}
	if f.from != "" {
		d, ok := strings.CutPrefix(f.from, "file://")
		if !ok || dest.Dir != "" {
			return job, fmt.Errorf("--from %q: want file://DIR, with a docker:// destination", f.from)
		}
		job.FromDir = d
	}
	if f.archiveSize < 0 || f.archiveSize > mirror.MaxArchiveSize {
		return job, usageError{fmt.Errorf("--archive-size %d: want a size in GiB from 1 to %d (0 or none: one OCI layout)", f.archiveSize, mirror.MaxArchiveSize)}
	}
	job.ArchiveBytes = f.archiveBytes
	if job.ArchiveBytes == 0 {
		job.ArchiveBytes = int64(f.archiveSize) << 30 // 0: the ImageSetConfiguration's archiveSize
	}
	switch {
	case job.ArchiveBytes < 0:
		return job, fmt.Errorf("--archive-size: %d; want GiB > 0", f.archiveSize)
	case f.archiveSize != 0 && dest.Dir == "":
		return job, fmt.Errorf("--archive-size applies to file:// destinations only")
	}
	return job, nil
}

// options are the mirror options of the flags, bound for dest.
func (f *mirrorFlags) options(dest mirror.Dest) mirror.Options {
	dest.Insecure, dest.CAFile, dest.AuthFile = !f.destTLSVerify, f.caFile, f.authfile
	o := mirror.DefaultOptions(dest)
	o.Source = mirror.Endpoint{Insecure: !f.srcTLSVerify, CAFile: f.srcCAFile, AuthFile: f.authfile}
	o.SourceRegistry, o.Parallel, o.Retries, o.Platforms = f.sourceRegistry, f.parallel, f.retries, f.platforms
	ws := strings.TrimPrefix(f.workspace, "file://")
	o.RepoLog = filepath.Join(ws, "working-dir", "repositories.log")
	o.BlobLog = filepath.Join(ws, "working-dir", "blobs.log")
	return o
}

// loadISC reads the ImageSetConfiguration, listing every problem as validate lists a profile's:
// a line each on stderr (remedy below), or a "problem" JSON line each; the error only summarizes.
func loadISC(cmd *cobra.Command, path string) (*mirror.ImageSetConfig, error) {
	isc, err := mirror.LoadISC(path)
	ps, ok := mirror.AsISCProblems(err)
	if !ok {
		return isc, err
	}
	if j := jsonOut(cmd); j != nil {
		for _, p := range ps {
			j.line("problem", p)
		}
	} else {
		_ = ps.Format(cmd.ErrOrStderr())
	}
	// Wrapping err keeps the *ISCError for the exit code (3, invalid input).
	return nil, fmt.Errorf("invalid ImageSetConfiguration %s: %d problem(s), each listed above; first: %s%w", path, len(ps), ps[0], quiet{err})
}

func printLines(w io.Writer, lines []string) {
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
}

// verifyMirror is --verify: the completeness proof against the content.json of an earlier run.
func verifyMirror(ctx context.Context, cmd *cobra.Command, out io.Writer, format, outDir string, o mirror.Options) error {
	c, vr, err := mirror.VerifyDir(ctx, outDir, o)
	if err != nil {
		return fmt.Errorf("--verify: %w", err)
	}
	if format == "json" {
		setResult(cmd, vr)
	} else {
		printLines(out, vr.Lines(c))
	}
	if len(vr.Missing) > 0 {
		return fmt.Errorf("%d items missing at the destination", len(vr.Missing))
	}
	return nil
}
