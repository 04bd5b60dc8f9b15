package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/bootstrap-dev/bootstrap/internal/finding"
	"github.com/bootstrap-dev/bootstrap/internal/mirror"
	"github.com/bootstrap-dev/bootstrap/internal/preflight"
	"github.com/bootstrap-dev/bootstrap/internal/progress"
	"github.com/bootstrap-dev/bootstrap/internal/units"
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

func runMirror(cmd *cobra.Command, f *mirrorFlags, dest string) error {
	if f.output != "text" && f.output != "json" {
		return fmt.Errorf("--output: %q, want text or json", f.output)
	}
	var host, ns, toDir, fromDir string
	if d, ok := strings.CutPrefix(dest, "file://"); ok {
		toDir = d
	} else if hostNS, ok := strings.CutPrefix(dest, "docker://"); ok && hostNS != "" {
		host, ns, _ = strings.Cut(hostNS, "/")
	} else {
		return fmt.Errorf("destination %q: want docker://HOST[:PORT][/NAMESPACE] or file://DIR", dest)
	}
	if f.from != "" {
		d, ok := strings.CutPrefix(f.from, "file://")
		if !ok || toDir != "" {
			return fmt.Errorf("--from %q: want file://DIR, with a docker:// destination", f.from)
		}
		fromDir = d
	}
	ws, ok := strings.CutPrefix(f.workspace, "file://")
	if !ok {
		return fmt.Errorf("--workspace %q: want file://DIR", f.workspace)
	}
	outDir := filepath.Join(ws, "working-dir", "cluster-resources")
	isc, err := mirror.LoadISC(f.config)
	if ps, ok := mirror.AsISCProblems(err); ok {
		// Every problem, as validate shows a profile's: a line each on stderr (remedy below),
		// or a "problem" JSON line each; the error only summarizes.
		if j := jsonOut(cmd); j != nil {
			for _, p := range ps {
				j.line("problem", p)
			}
		} else {
			_ = ps.Format(cmd.ErrOrStderr())
		}
		// Wrapping err keeps the *ISCError for the exit code (3, invalid input).
		return fmt.Errorf("invalid ImageSetConfiguration %s: %d problem(s), each listed above; first: %s%w", f.config, len(ps), ps[0], quiet{err})
	}
	if err != nil {
		return err
	}
	o := mirror.DefaultOptions(mirror.Endpoint{Host: host, Insecure: !f.destTLSVerify, CAFile: f.caFile, AuthFile: f.authfile})
	o.Source = mirror.Endpoint{Insecure: !f.srcTLSVerify, CAFile: f.srcCAFile, AuthFile: f.authfile}
	o.SourceRegistry, o.Parallel, o.Retries, o.Platforms = f.sourceRegistry, f.parallel, f.retries, f.platforms
	o.RepoLog = filepath.Join(ws, "working-dir", "repositories.log")
	o.BlobLog = filepath.Join(ws, "working-dir", "blobs.log")
	if f.archiveSize < 0 || f.archiveSize > mirror.MaxArchiveSize {
		return usageError{fmt.Errorf("--archive-size %d: want a size in GiB from 1 to %d (0 or none: one OCI layout)", f.archiveSize, mirror.MaxArchiveSize)}
	}
	archiveBytes := f.archiveBytes
	if archiveBytes == 0 {
		size := f.archiveSize
		if size == 0 {
			size = isc.ArchiveSize
		}
		archiveBytes = int64(size) << 30
	}
	switch {
	case archiveBytes < 0:
		return fmt.Errorf("--archive-size: %d; want GiB > 0", f.archiveSize)
	case archiveBytes > 0 && toDir == "" && f.archiveSize != 0:
		return fmt.Errorf("--archive-size applies to file:// destinations only")
	case toDir == "":
		archiveBytes = 0 // the ISC's archiveSize concerns disk mirrors only
	}
	o.DestDir, o.SourceDir = toDir, fromDir // mirror.Load sets the layouts it reads and writes
	if err := o.Validate(); err != nil {
		return err
	}
	out, errOut := cmd.OutOrStdout(), cmd.ErrOrStderr()
	if !f.destTLSVerify && host != "" {
		fmt.Fprintln(errOut, "WARNING: TLS verification is off for the destination", host)
	}
	if !f.srcTLSVerify && fromDir == "" {
		fmt.Fprintln(errOut, "WARNING: TLS verification is off for the sources")
	}
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	if f.verify {
		return verifyMirror(ctx, cmd, out, f.output, outDir, o)
	}
	job := mirror.Job{ISC: isc, Target: mirror.Target{Host: host, Namespace: ns}, ToDir: toDir, ArchiveBytes: archiveBytes,
		FromDir: fromDir, OutDir: outDir, SignatureStore: f.signatureStore, UpdateURL: f.updateURL}
	loaded, err := mirror.Load(ctx, job, &o)
	if err != nil {
		if fromDir != "" {
			return fmt.Errorf("--from: %w", err)
		}
		return err
	}
	if un := loaded.Unpacked; un != nil {
		fmt.Fprintf(errOut, "archive %s: %d parts checked and extracted, %d extracted before", fromDir, len(un.Extracted), len(un.Skipped))
		if len(un.Missing) > 0 {
			fmt.Fprintf(errOut, "; not here (carried earlier?): %s", strings.Join(un.Missing, " "))
		}
		fmt.Fprintln(errOut)
	}
	for _, c := range loaded.Resolved.Catalogs {
		for _, w := range c.Warnings {
			fmt.Fprintf(errOut, "WARNING: catalog %s: %s\n", c.Source, w)
		}
	}
	if f.dryRun {
		plan, err := mirror.Plan(ctx, loaded.Resolved.Images, o)
		if err != nil {
			return err
		}
		if f.output == "json" {
			setResult(cmd, plan)
		} else if err := printMirrorPlan(out, f.output, plan); err != nil {
			return err
		}
		failed := 0
		for _, im := range plan.Images {
			if im.Error != "" {
				failed++
			}
		}
		if failed > 0 { // the byte totals leave these out: the plan is not the whole mirror
			return fmt.Errorf("%d of %d images could not be resolved (ERROR in the plan); the totals leave them out", failed, len(plan.Images))
		}
		return nil
	}
	progressOut := errOut
	if f.output == "json" { // -o json: every line on stdout, the result last
		progressOut = out
	}
	o.Progress = mirrorProgress(progressOut, f.output == "json", mirrorIsTTY(errOut))
	if toDir != "" {
		o.DiskCheck = func(dir string, need int64) error {
			if archiveBytes > 0 {
				need *= 2 // the staged layout and the parts
			}
			return mirrorDiskCheck(errOut, dir, need)
		}
	}
	rep, cerr := loaded.Run(ctx, o)
	var fe *mirror.FailedError
	if cerr != nil && (rep == nil || !errors.As(cerr, &fe)) {
		return cerr
	}
	cr, outs, parts, sigFiles := rep.Copy, rep.Outputs, rep.Parts, rep.SignatureConfigMaps
	for _, w := range cr.Warnings { // a registry that refused sparse indexes: once per registry
		fmt.Fprintln(errOut, "WARNING:", w)
	}
	if toDir != "" {
		outDir = toDir
	}
	if f.output == "json" {
		res := map[string]any{"mirror": cr, "outputs": outs, "outputDir": outDir, "archiveParts": parts}
		if len(rep.Content.Graph) > 0 {
			res["graph"], res["updateService"] = rep.Content.Graph, rep.UpdateService
		}
		setResult(cmd, res)
		return cerr
	}
	skipped := 0
	for _, im := range cr.Images {
		if im.Skipped {
			skipped++
		}
	}
	fmt.Fprintf(out, "mirrored %d images (%d already present, %d failed) in %s: %s pulled, %d blobs copied, %d mounted, %d present\n",
		len(cr.Images)-len(cr.Failed), skipped, len(cr.Failed), cr.Duration.Round(time.Millisecond), units.Bytes(cr.BytesPulled),
		cr.BlobsCopied, cr.BlobsMounted, cr.BlobsPresent)
	files := append([]string{outs.IDMS, outs.ITMS, outs.Content, outs.Mapping, rep.UpdateService}, sigFiles...)
	fmt.Fprintf(out, "outputs in %s: %s\n", outDir, strings.Join(strings.Fields(strings.Join(append(files, outs.CatalogSources...), " ")), " "))
	if g := rep.Content.Graph; len(g) > 0 {
		fmt.Fprintf(out, "update graph: %d files in %s (cincinnati/, graph-data/), listed in content.json: bootstrap upgrade plan --graph %s\n", len(g), outDir, outDir)
	}
	if archiveBytes > 0 {
		var names []string
		var size int64
		for _, p := range parts {
			names = append(names, p.Name)
			size += p.Size
		}
		if len(parts) == 0 {
			fmt.Fprintf(out, "archive: nothing new, no part written (archive.json lists the earlier ones)\n")
		} else {
			fmt.Fprintf(out, "archive: %d new part(s), %s: %s; carry them with %s\n", len(parts), units.Bytes(size), strings.Join(names, " "), mirror.ArchiveIndexFile)
		}
	}
	for _, fl := range cr.Failed {
		fmt.Fprintf(out, "FAILED %s: %s\n", fl.Source, fl.Error)
	}
	return cerr
}

// mirrorDiskCheck is the disk preflight of a file:// run: the blobs the layout does not hold yet
// must fit on its file system, with 1 % (at least 64 MiB) to spare for manifests and the file
// system; otherwise nothing is copied and the command exits 2 like a failed preflight.
func mirrorDiskCheck(w io.Writer, dir string, need int64) error {
	need += max(need/100, 64<<20)
	r := preflight.CheckDisk(dir, need)
	fmt.Fprintf(w, "%s disk %s: %s\n", r.Status.Label(), dir, r.Message)
	if r.Status == finding.Fail {
		fmt.Fprintf(w, "  → free space there or give file:// a larger file system; nothing was copied\n")
		return &preflight.FailedError{Checks: []string{"disk " + dir}}
	}
	return nil
}

// verifyMirror is --verify: the completeness proof against the content.json of an earlier run.
func verifyMirror(ctx context.Context, cmd *cobra.Command, out io.Writer, format, outDir string, o mirror.Options) error {
	c, err := mirror.ReadContent(filepath.Join(outDir, "content.json"))
	if err != nil {
		return fmt.Errorf("--verify needs the content.json of an earlier run: %w", err)
	}
	if err := mirror.VerifyGraph(outDir, c.Graph); err != nil {
		return fmt.Errorf("--verify: update graph: %w", err)
	}
	vr, err := mirror.Verify(ctx, c, o)
	if err != nil {
		return err
	}
	if format == "json" {
		setResult(cmd, vr)
	} else {
		fmt.Fprintf(out, "verified %d images, %d manifests, %d blobs; %d missing\n", vr.Images, vr.Manifests, vr.Blobs, len(vr.Missing))
		if len(c.Graph) > 0 {
			fmt.Fprintf(out, "verified %d update graph files against content.json\n", len(c.Graph))
		}
		for _, m := range vr.Missing {
			fmt.Fprintf(out, "MISSING %s (%s) %s %s\n", m.Source, m.Dest, m.What, m.Error)
		}
	}
	if len(vr.Missing) > 0 {
		return fmt.Errorf("%d items missing at the destination", len(vr.Missing))
	}
	return nil
}

func printMirrorPlan(w io.Writer, format string, p *mirror.PlanResult) error {
	if format == "json" {
		return json.NewEncoder(w).Encode(p)
	}
	for _, im := range p.Images {
		state := "copy"
		if im.Present {
			state = "present"
		}
		if im.Error != "" {
			state = "ERROR " + im.Error
		}
		filtered := ""
		if im.FilteredPlatforms > 0 {
			filtered = fmt.Sprintf(", %d platform(s) filtered out: %s", im.FilteredPlatforms, units.Bytes(im.FilteredBytes))
		}
		fmt.Fprintf(w, "%-8s %s -> %s %s (%s%s)\n", state, im.Source, im.Dest, im.Digest, units.Bytes(im.Size), filtered)
	}
	fmt.Fprintf(w, "%d images, %d unique blobs, %s unique (%s with repeats, %s saved by dedup), %s present, %s to copy (also the disk a file:// run needs)\n",
		len(p.Images), p.UniqueBlobs, units.Bytes(p.UniqueBytes), units.Bytes(p.TotalBytes), units.Bytes(p.SavedBytes), units.Bytes(p.PresentBytes), units.Bytes(p.ToCopyBytes))
	if p.FilteredPlatforms > 0 {
		fmt.Fprintf(w, "%d platform image(s) of multi-arch indexes filtered out; if the registry refuses sparse indexes (distribution by default, Quay without FEATURE_SPARSE_INDEX), they are copied too: %s more\n",
			p.FilteredPlatforms, units.Bytes(p.SparseFallbackBytes))
	}
	return nil
}

// mirrorProgress renders progress: one JSON object per snapshot, a redrawn line on a TTY, or a
// plain line at most every 2 seconds otherwise. Snapshots arrive from one goroutine at a time.
func mirrorProgress(w io.Writer, asJSON, tty bool) mirror.ProgressFunc {
	var mu sync.Mutex
	last := time.Time{}
	return func(p mirror.Progress) {
		mu.Lock()
		defer mu.Unlock()
		if asJSON {
			_ = json.NewEncoder(w).Encode(map[string]any{"kind": "progress", "bytesDone": p.BytesDone, "bytesTotal": p.BytesTotal,
				"imagesDone": p.ImagesDone, "imagesTotal": p.ImagesTotal, "blobsDone": p.BlobsDone, "blobsTotal": p.BlobsTotal,
				"failed": p.Failed, "elapsedSeconds": p.Elapsed.Seconds()})
			return
		}
		if !tty && time.Since(last) < 2*time.Second && p.ImagesDone < p.ImagesTotal {
			return
		}
		last = time.Now()
		rate := float64(p.BytesDone) / max(p.Elapsed.Seconds(), 0.001)
		eta := progress.TimeLeftOfBoth(p.BytesDone, p.BytesTotal, rate,
			int64(p.BlobsDone), int64(p.BlobsTotal), float64(p.BlobsDone)/max(p.Elapsed.Seconds(), 0.001))
		if eta == "" {
			eta = "-"
		}
		line := fmt.Sprintf("%s / %s  %s/s  ETA %s  blobs %d/%d  images %d/%d  failed %d", units.Bytes(p.BytesDone), units.Bytes(p.BytesTotal),
			units.Bytes(int64(rate)), eta, p.BlobsDone, p.BlobsTotal, p.ImagesDone, p.ImagesTotal, p.Failed)
		if tty {
			fmt.Fprintf(w, "\r\033[K%s", line)
			if p.ImagesDone+p.Failed >= p.ImagesTotal {
				fmt.Fprintln(w)
			}
			return
		}
		fmt.Fprintln(w, line)
	}
}

func mirrorIsTTY(w io.Writer) bool {
	if u, ok := w.(interface{ Unwrap() io.Writer }); ok { // the secret scrubber
		w = u.Unwrap()
	}
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
