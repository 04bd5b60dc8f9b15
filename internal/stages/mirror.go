package stages

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/mirror"
	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
)

// Mirror is the mirror stage: resolve the site's ImageSetConfiguration, copy it into the site
// registry, write oc-mirror v2's idms-oc-mirror.yaml, itms-oc-mirror.yaml and cs-*.yaml, and
// bootstrap's content.json and mapping.txt, into the work dir, and prove completeness.
type Mirror struct{}

// MirrorOutput is the journaled output of the mirror stage, read by later stages (iso needs the
// mirror sets, the CatalogSources and the release image by digest).
type MirrorOutput struct {
	Outputs mirror.Outputs `json:"outputs"`
	// ReleaseImage is the mirrored release image by digest ("" when the ISC has no release).
	ReleaseImage string `json:"releaseImage,omitempty"`
	// SignatureConfigMaps are the release signature ConfigMaps written (with mirror.signatureStore).
	SignatureConfigMaps []string `json:"signatureConfigMaps,omitempty"`
	Images              int      `json:"images"`
	Copied              int      `json:"copied"`
	BytesPulled         int64    `json:"bytesPulled"`
	Seconds             float64  `json:"seconds"`
	// SparseRefused lists the registry hosts that refused a platform-filtered (sparse) index:
	// every platform of the multi-arch images went to them (per image in content.json).
	SparseRefused []string `json:"sparseRefused,omitempty"`
}

// mirrorInputs is what the stage's fingerprint covers. Files are hashed by content; the auth
// files are secrets and only their paths are recorded.
type mirrorInputs struct {
	ISCSHA256      string   `json:"iscSHA256"`
	Registry       string   `json:"registry"`
	Namespace      string   `json:"namespace"`
	CASHA256       string   `json:"caSHA256,omitempty"`
	AuthFile       string   `json:"authFile,omitempty"`
	Insecure       bool     `json:"insecure,omitempty"`
	SourceRegistry string   `json:"sourceRegistry,omitempty"`
	SourceInsecure bool     `json:"sourceInsecure,omitempty"`
	Platforms      []string `json:"platforms,omitempty"`
	SignatureStore string   `json:"signatureStore,omitempty"`
	// ArchiveDir and ArchiveSHA256 (of its archive.json, or of its content.json) identify a disk
	// mirror to load: new parts carried in change the fingerprint.
	ArchiveDir    string `json:"archiveDir,omitempty"`
	ArchiveSHA256 string `json:"archiveSHA256,omitempty"`
}

// Name implements pipeline.Stage.
func (Mirror) Name() string { return NameMirror }

// Summary implements pipeline.Stage.
func (Mirror) Summary() string { return summary(NameMirror) }

// Inputs implements pipeline.Stage.
func (Mirror) Inputs(env *pipeline.Env) (any, error) {
	s := env.Site
	in := mirrorInputs{Registry: s.Registry.Host, Namespace: s.Registry.Namespace, AuthFile: s.Registry.AuthFile,
		Insecure: s.Registry.Insecure, SourceRegistry: s.Mirror.Source.Registry, SourceInsecure: s.Mirror.Source.Insecure,
		Platforms: s.Mirror.Platforms, SignatureStore: s.Mirror.SignatureStore}
	var err error
	if in.ISCSHA256, err = fileSHA256(s.Mirror.ImageSetConfig); err != nil {
		return nil, fmt.Errorf("mirror.imageSetConfig: %w", err)
	}
	if s.Registry.CAFile != "" {
		if in.CASHA256, err = fileSHA256(s.Registry.CAFile); err != nil {
			return nil, fmt.Errorf("registry.caFile: %w", err)
		}
	}
	if d := s.Mirror.Source.ArchiveDir; d != "" {
		in.ArchiveDir = d
		f := filepath.Join(d, mirror.ArchiveIndexFile)
		if _, err := os.Stat(f); err != nil {
			f = filepath.Join(d, "content.json")
		}
		if in.ArchiveSHA256, err = fileSHA256(f); err != nil {
			return nil, fmt.Errorf("mirror.source.archiveDir: %w", err)
		}
	}
	return in, nil
}

// mirrorOptions turns the site profile into mirror options: the site registry is the destination.
func mirrorOptions(env *pipeline.Env) (mirror.Options, error) {
	s := env.Site
	o := mirror.DefaultOptions(mirror.Dest{Host: s.Registry.Host, Namespace: s.Registry.Namespace, Insecure: s.Registry.Insecure,
		CAFile: s.Registry.CAFile, AuthFile: s.Registry.AuthFile})
	o.Source = mirror.Endpoint{Insecure: s.Mirror.Source.Insecure, CAFile: s.Mirror.Source.CAFile, AuthFile: s.Mirror.Source.AuthFile}
	o.SourceRegistry = s.Mirror.Source.Registry
	// Platforms are passed as written: ["all"] (or an empty list) keeps every platform of
	// multi-arch indexes. A platform-filtered (sparse) index refused by the registry (distribution's
	// default, Quay without FEATURE_SPARSE_INDEX) is copied whole and the run warns once.
	o.Platforms = s.Mirror.Platforms
	if s.Mirror.Parallel > 0 {
		o.Parallel = s.Mirror.Parallel
	}
	o.Log = env.Log
	if env.WorkDir != "" {
		o.RepoLog = filepath.Join(env.WorkDir, "mirror-repositories.log")
		o.BlobLog = filepath.Join(env.WorkDir, "mirror-blobs.log")
	}
	return o, o.Validate()
}

// Run implements pipeline.Stage.
func (m Mirror) Run(ctx context.Context, env *pipeline.Env) (any, error) {
	o, err := mirrorOptions(env)
	if err != nil {
		return nil, err
	}
	loaded, err := mirrorLoad(ctx, env, &o)
	if err != nil {
		return nil, err
	}
	emit := func(e pipeline.Event) {
		if env.Events != nil {
			e.Time, e.Stage = time.Now(), m.Name()
			env.Events(e)
		}
	}
	for _, n := range loaded.Notes() {
		kind := pipeline.Info
		if n.Warning {
			kind = pipeline.Warning
		}
		emit(pipeline.Event{Kind: kind, Message: n.Text})
	}
	o.Progress = func(p mirror.Progress) {
		emit(pipeline.Event{Kind: pipeline.Progress, Current: p.BytesDone, Total: p.BytesTotal, Unit: "bytes",
			Done: int64(p.ImagesDone), DoneTotal: int64(p.ImagesTotal),
			Parts: int64(p.BlobsDone), PartsTotal: int64(p.BlobsTotal), PartsUnit: "blobs"})
	}
	var (
		stepMu  sync.Mutex
		stepErr error
	)
	o.ImageDone = func(r mirror.ImageResult) {
		key := "image " + r.Source + " -> " + r.Dest
		if env.Steps.Done(key, nil) {
			return
		}
		if err := env.Steps.Record(key, map[string]any{"digest": r.Digest, "size": r.Size, "kind": r.Kind}); err != nil {
			stepMu.Lock()
			if stepErr == nil {
				stepErr = err // journal trouble is reported at the end; the copy goes on
			}
			stepMu.Unlock()
		}
		emit(pipeline.Event{Kind: pipeline.StepDone, Step: key})
	}
	rep, copyErr := loaded.Run(ctx, o)
	if rep == nil || rep.Copy == nil {
		return nil, copyErr
	}
	cr := rep.Copy
	for _, w := range cr.Warnings { // one per refusing registry, not per image
		emit(pipeline.Event{Kind: pipeline.Warning, Message: w})
	}
	out := MirrorOutput{Images: len(cr.Images), Copied: cr.BlobsCopied, BytesPulled: cr.BytesPulled, Seconds: cr.Duration.Seconds(),
		SparseRefused: cr.SparseRefused, Outputs: rep.Outputs, SignatureConfigMaps: rep.SignatureConfigMaps}
	for _, im := range cr.Images {
		if im.Kind == mirror.KindRelease && im.Digest != "" && out.ReleaseImage == "" {
			out.ReleaseImage = repoOf(im.Dest) + "@" + im.Digest
		}
	}
	if copyErr != nil {
		return nil, copyErr
	}
	if stepErr != nil { // all ImageDone calls have returned: Copy is done
		return nil, fmt.Errorf("journal: %w", stepErr)
	}
	if err := m.Verify(ctx, env); err != nil {
		return nil, err
	}
	return out, nil
}

// Verify implements pipeline.Verifier: everything in content.json is still at the destination
// (the check `bootstrap mirror --verify` makes).
func (Mirror) Verify(ctx context.Context, env *pipeline.Env) error {
	o, err := mirrorOptions(env)
	if err != nil {
		return err
	}
	_, vr, err := mirror.VerifyDir(ctx, env.WorkDir, o)
	if err != nil {
		return err
	}
	if len(vr.Missing) > 0 {
		m := vr.Missing[0]
		return fmt.Errorf("%d items missing at %s, first: %s %s (%s); run the mirror stage again (bootstrap replay mirror)",
			len(vr.Missing), env.Site.Registry.Host, m.Source, m.What, m.Error)
	}
	return nil
}

// Plan implements pipeline.Planner: every image, the unique bytes and what is already present,
// in the lines `bootstrap mirror --dry-run` shows.
func (Mirror) Plan(ctx context.Context, env *pipeline.Env) ([]string, error) {
	o, err := mirrorOptions(env)
	if err != nil {
		return nil, err
	}
	loaded, err := mirrorLoad(ctx, env, &o)
	if err != nil {
		return nil, err
	}
	p, err := loaded.Plan(ctx, o)
	if err != nil {
		return nil, err
	}
	return p.Lines(), nil
}

// mirrorLoad turns the site's mirror section into a loaded mirror job: the ImageSetConfiguration
// resolved against the source registries or, with mirror.source.archiveDir, the disk mirror
// written by `bootstrap mirror file://DIR` (its parts checked and extracted first).
func mirrorLoad(ctx context.Context, env *pipeline.Env, o *mirror.Options) (*mirror.Loaded, error) {
	job := mirror.Job{OutDir: env.WorkDir, SignatureStore: env.Site.Mirror.SignatureStore}
	if dir := env.Site.Mirror.Source.ArchiveDir; dir != "" {
		job.FromDir = dir
		l, err := mirror.Load(ctx, job, o)
		if err != nil {
			return nil, fmt.Errorf("mirror.source.archiveDir: %w", err)
		}
		return l, nil
	}
	isc, err := mirror.LoadISC(env.Site.Mirror.ImageSetConfig)
	if err != nil {
		return nil, err
	}
	job.ISC = isc
	return mirror.Load(ctx, job, o)
}

// repoOf strips the tag and digest of a reference.
func repoOf(r string) string {
	r, _, _ = strings.Cut(r, "@")
	if i := strings.LastIndex(r, ":"); i > strings.LastIndex(r, "/") {
		r = r[:i]
	}
	return r
}

var (
	_ pipeline.Stage    = Mirror{}
	_ pipeline.Verifier = Mirror{}
	_ pipeline.Planner  = Mirror{}
)
