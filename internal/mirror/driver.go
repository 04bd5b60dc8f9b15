package mirror

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
)

// The mirror driver: one entry point behind `bootstrap mirror` and the mirror stage. Load turns a
// Job into images (the ImageSetConfiguration resolved against the sources, or a disk mirror's
// content.json read back, its parts checked and extracted first); Run copies them, builds the
// filtered catalogs (on the connected side, once: into the registry, or into the disk mirror),
// and writes what the run produced: the outputs (IDMS/ITMS, CatalogSources, content.json,
// mapping.txt, the release signature ConfigMaps) for a registry, content.json and the archive
// parts for a disk mirror. Callers parse flags or a site profile into a Job and show the Report.

// Job is one mirror run: what to load and what to write besides the images. Where the images
// go is Options.Dest: a registry, or with Dest.Dir a disk mirror (file://DIR).
type Job struct {
	// ISC is the configuration to resolve (not read when FromDir is set).
	ISC *ImageSetConfig
	// ArchiveBytes > 0 makes a disk mirror a split one: the layout is staged in
	// DIR/working-dir and packed into parts of at most that size. Zero takes the ISC's
	// archiveSize (GiB) for a disk mirror; a registry destination ignores both.
	ArchiveBytes int64
	// FromDir loads a disk mirror that a run into a directory (Dest.Dir) wrote: --from
	// file://DIR, mirror.source.archiveDir.
	FromDir string
	// OutDir receives the outputs of a registry run.
	OutDir string
	// SignatureStore, when set, fetches each mirrored release's signatures into OutDir.
	SignatureStore string
	// UpdateURL, when set, is the update service the channel graphs are fetched from (graph.go);
	// the ISC's graph: true fetches them from DefaultUpdateURL when it is not set.
	UpdateURL string
	// HTTP, when set, is the client the update graph is fetched with.
	HTTP *http.Client
	// GraphDataURL and GraphBaseImage override where an ISC with graph: true gets the graph-data
	// tarball and the image the graph-data image is built on (graphimage.go).
	GraphDataURL, GraphBaseImage string
}

// Loaded is a job turned into images, ready for Plan or Run.
type Loaded struct {
	Job Job
	// Dest is the destination as the caller gave it (Load points a split disk mirror's
	// Options.Dest.Dir at its staging layout).
	Dest     Dest
	Resolved *Resolved
	// Archive is the content.json of the disk mirror loaded (FromDir).
	Archive Content
	// Unpacked says which parts of a split disk mirror were checked and extracted (FromDir).
	Unpacked *UnpackResult
}

// Report is what Run did.
type Report struct {
	Copy    *Result
	Content Content
	// Outputs are the files written, relative to OutDir (registry runs) or Dest.Dir (disk runs).
	Outputs Outputs
	// SignatureConfigMaps are the release signature ConfigMaps written into OutDir.
	SignatureConfigMaps []string
	// Parts are the archive parts this run wrote (disk runs with an archive size).
	Parts []ArchivePart
	// UpdateService is the UpdateService manifest written into OutDir (a graph-data image mirrored).
	UpdateService string
	// Dir is where the outputs are: OutDir, or Dest.Dir for a disk mirror.
	Dir string
	// Split says that the run wrote a split disk mirror (archive parts).
	Split bool
	// CatalogConfigs are the catalogs/<minor>/<CatalogSource>/ directories written into OutDir
	// for upgrade plan (catalogconfigs.go).
	CatalogConfigs []string
}

// Load resolves a job into images bound for o.Dest. For a disk mirror it sets o.SourceDir
// (FromDir) or, for a split one (ArchiveBytes), points o.Dest.Dir at the staging layout it creates.
func Load(ctx context.Context, job Job, o *Options) (*Loaded, error) {
	l := &Loaded{Job: job, Dest: o.Dest}
	if job.FromDir != "" {
		layout := job.FromDir
		if _, err := os.Stat(filepath.Join(job.FromDir, ArchiveIndexFile)); err == nil {
			un, err := UnpackArchive(job.FromDir)
			if err != nil {
				return nil, err
			}
			l.Unpacked, layout = un, un.Layout
		}
		c, err := ReadContent(filepath.Join(layout, "content.json"))
		if err != nil {
			return nil, fmt.Errorf("%s: not a disk mirror written by `bootstrap mirror file://DIR`: %w", job.FromDir, err)
		}
		ims, err := ArchiveImages(c, o.Dest.Host, o.Dest.Namespace)
		if err != nil {
			return nil, err
		}
		o.SourceDir = layout
		l.Archive, l.Resolved = c, &Resolved{Images: ims}
		return l, nil
	}
	if job.ISC == nil {
		return nil, errors.New("mirror: a job needs an ImageSetConfiguration or a disk mirror to load")
	}
	t := o.Dest
	if dir := o.Dest.Dir; dir != "" {
		t = Dest{Host: ArchiveHost} // the disconnected half maps the names to its registry
		if job.ArchiveBytes == 0 {
			l.Job.ArchiveBytes = int64(job.ISC.ArchiveSize) << 30
			job = l.Job
		}
		if job.ArchiveBytes > 0 {
			o.Dest.Dir = ArchiveLayout(dir)
			if err := os.MkdirAll(o.Dest.Dir, 0o755); err != nil {
				return nil, err
			}
		}
	}
	res, err := Resolve(ctx, job.ISC, t, *o)
	if err != nil {
		return nil, err
	}
	l.Resolved = res
	return l, nil
}

// Run copies the loaded images and finishes the run (see the top of this file). A FailedError
// (some images failed after retries) comes back with the report: the rest was mirrored and the
// outputs written.
func (l *Loaded) Run(ctx context.Context, o Options) (*Report, error) {
	split := l.Dest.Dir != "" && l.Job.ArchiveBytes > 0
	if check := o.DiskCheck; check != nil && split {
		o.DiskCheck = func(dir string, need int64) error { return check(dir, 2*need) } // the staged layout and the parts
	}
	cr, copyErr := Copy(ctx, l.Resolved.Images, o)
	var fe *FailedError
	if cr == nil || copyErr != nil && !errors.As(copyErr, &fe) {
		return nil, copyErr
	}
	rep := &Report{Copy: cr, Dir: l.Job.OutDir, Split: split}
	if l.Dest.Dir != "" {
		rep.Dir = l.Dest.Dir
	}
	cats, catImages, err := Catalogs(ctx, l.Resolved, cr.Images, o)
	if err != nil {
		return rep, err
	}
	rep.Content = Content{Images: append(append([]ImageResult(nil), cr.Images...), catImages...),
		Catalogs: append(cats, CarriedCatalogs(l.Archive, cr.Images)...)}
	graphImages, err := l.graph(ctx, o, rep)
	if err != nil {
		return rep, err
	}
	rep.Content.Images = append(rep.Content.Images, graphImages...)
	if l.Dest.Dir != "" {
		return rep, firstErr(l.finishDisk(rep), copyErr)
	}
	if err := os.MkdirAll(l.Job.OutDir, 0o755); err != nil {
		return rep, err
	}
	if rep.Outputs, err = WriteOutputs(l.Job.OutDir, rep.Content); err != nil {
		return rep, err
	}
	if rep.UpdateService, err = WriteUpdateService(l.Job.OutDir, rep.Content.Images, l.Dest.Host, l.Dest.Namespace); err != nil {
		return rep, err
	}
	if rep.CatalogConfigs, err = WriteCatalogConfigs(ctx, l.Job.OutDir, rep.Content.Catalogs, o, o.Dest.Endpoint()); err != nil {
		return rep, err
	}
	if copyErr != nil {
		return rep, copyErr
	}
	if l.Job.SignatureStore != "" {
		var rels []ReleaseSignatures
		for _, im := range cr.Images {
			if im.Kind != KindRelease || im.Digest == "" {
				continue
			}
			sigs, err := FetchReleaseSignatures(ctx, nil, l.Job.SignatureStore, im.Digest)
			if err != nil {
				return rep, fmt.Errorf("signature store: release %s: %w", im.Source, err)
			}
			rels = append(rels, ReleaseSignatures{Digest: im.Digest, Signatures: sigs})
		}
		if len(rels) > 0 {
			if rep.SignatureConfigMaps, err = WriteSignatureConfigMap(l.Job.OutDir, rels); err != nil {
				return rep, err
			}
		}
	}
	return rep, nil
}

// finishDisk writes a disk mirror's content.json and, with an archive size, its new parts.
func (l *Loaded) finishDisk(rep *Report) error {
	dir := l.Dest.Dir
	rep.Outputs.Content = "content.json"
	if l.Job.ArchiveBytes == 0 {
		return WriteContent(filepath.Join(dir, rep.Outputs.Content), rep.Content)
	}
	// "already present" describes the staging layout, not the archive: leave it out so that a
	// run with nothing new writes the same content.json (and no new part); an image found
	// present was not read again: its size comes from the last content.json
	prev := map[string]int64{}
	if old, err := ReadContent(ArchiveContent(dir)); err == nil {
		for _, im := range old.Images {
			prev[im.Source+" "+im.Dest+" "+im.Digest] = im.Size
		}
	}
	c := rep.Content
	c.Images = append([]ImageResult(nil), c.Images...)
	for i := range c.Images {
		if c.Images[i].Skipped && c.Images[i].Size == 0 {
			c.Images[i].Size = prev[c.Images[i].Source+" "+c.Images[i].Dest+" "+c.Images[i].Digest]
		}
		c.Images[i].Skipped = false
	}
	if err := WriteContent(ArchiveContent(dir), c); err != nil {
		return err
	}
	layout := ArchiveLayout(dir)
	meta := map[string]string{
		"content.json": ArchiveContent(dir),
		"index.json":   filepath.Join(layout, "index.json"),
		"oci-layout":   filepath.Join(layout, "oci-layout")}
	for _, g := range c.Graph { // the update graph travels beside content.json (graph.go)
		meta[g.Path] = filepath.Join(filepath.Dir(ArchiveContent(dir)), filepath.FromSlash(g.Path))
	}
	parts, err := WriteArchive(dir, layout, l.Job.ArchiveBytes, meta)
	if err != nil {
		return fmt.Errorf("archive: %w", err)
	}
	rep.Parts = parts
	rep.Outputs.Content = filepath.Join("working-dir", "content.json")
	return nil
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
