package mirror

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/regclient/regclient"
	"github.com/regclient/regclient/types/manifest"
)

// ImageResult is what happened to one image.
type ImageResult struct {
	Image
	Digest string `json:"digest,omitempty"`
	Size   int64  `json:"size,omitempty"`
	// Skipped is true when the destination already had the image.
	Skipped bool `json:"skipped,omitempty"`
	// SparseRefused is true when the destination refuses platform-filtered (sparse) indexes and
	// the image's left-out platforms were copied too: ExtraPlatforms children, ExtraBytes bytes.
	SparseRefused  bool   `json:"sparseRefused,omitempty"`
	ExtraPlatforms int    `json:"extraPlatforms,omitempty"`
	ExtraBytes     int64  `json:"extraBytes,omitempty"`
	Error          string `json:"error,omitempty"`
}

// Result summarizes a Copy.
type Result struct {
	Images []ImageResult `json:"images"`
	// Failed lists the images that still failed after retries (also in Images).
	Failed       []ImageResult `json:"failed,omitempty"`
	BytesPulled  int64         `json:"bytesPulled"`  // read from the source
	BlobsCopied  int           `json:"blobsCopied"`  // fetched and pushed
	BlobsMounted int           `json:"blobsMounted"` // cross-repository mounts at the destination
	BlobsPresent int           `json:"blobsPresent"` // found at the destination by HEAD
	Duration     time.Duration `json:"duration"`
	// SparseRefused lists the destination hosts that refused a platform-filtered (sparse) index;
	// Warnings says, once per host, what that cost and how to avoid it.
	SparseRefused []string `json:"sparseRefused,omitempty"`
	Warnings      []string `json:"warnings,omitempty"`
}

// FailedError is returned by Copy when some images failed after retries; the others were
// mirrored. Callers branch on it with errors.As to report the list and exit non-zero.
type FailedError struct {
	Failed []ImageResult
}

func (e *FailedError) Error() string {
	names := make([]string, 0, 3)
	for i, f := range e.Failed {
		if i == 3 {
			names = append(names, "...")
			break
		}
		names = append(names, f.Source+": "+f.Error)
	}
	return fmt.Sprintf("%d image(s) failed: %s", len(e.Failed), strings.Join(names, "; "))
}

// Copy mirrors images into the destination. It returns a *FailedError (with a complete Result)
// when some images failed, and another error only when nothing could be attempted.
// Running it again copies only what is missing.
func Copy(ctx context.Context, images []Image, o Options) (*Result, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	o = o.withRun()
	rc, err := newClient(o, hostsOf(images)...)
	if err != nil {
		return nil, err
	}
	if o.Dest.Dir == "" {
		if err := checkDest(ctx, rc, o); err != nil {
			return nil, err
		}
	}
	start := time.Now()
	e := &engine{rc: rc, o: o, states: map[string]*blobState{}, tasks: map[string]*task{}, counted: map[string]bool{},
		refused: map[string]bool{}, accepted: map[string]bool{}, probes: map[string]chan struct{}{},
		repos: map[string]*repoState{}}
	if o.RepoLog != "" && o.Dest.Dir == "" {
		closeLog, err := e.openRepoLog(o.RepoLog)
		if err != nil {
			return nil, err
		}
		defer closeLog()
	}
	if o.BlobLog != "" && o.Dest.Dir == "" {
		bl, err := openBlobLog(o.BlobLog)
		if err != nil {
			return nil, err
		}
		e.blobs = bl
		defer func() {
			bl.close()
			// The log only spares the run after an interrupted one its HEADs. A run that was not
			// interrupted (done, or ended with failed images) removes it, so that no later run
			// trusts it: a destination wiped or garbage-collected afterwards would otherwise have
			// its pushes refused for blobs the log claims, run after run. A killed or cancelled
			// run leaves it for the resume.
			if ctx.Err() == nil {
				_ = os.Remove(o.BlobLog)
			}
		}()
	}
	images = dedupImages(images)
	e.imagesTotal.Store(int64(len(images)))

	stop := e.startProgress(start)
	var ps []*planned
	in := make(chan *planned, o.Parallel)
	if o.Dest.Dir != "" && o.DiskCheck != nil {
		// a disk mirror checks its disk need before anything is written: plan it all first
		ps = resolveWithSignatures(ctx, rc, images, o, false)
		if err := o.DiskCheck(o.Dest.Dir, layoutNeed(o.Dest.Dir, ps)); err != nil {
			stop()
			return nil, err
		}
		e.imagesTotal.Store(int64(len(ps)))
		go func() {
			for _, p := range ps {
				in <- p
			}
			close(in)
		}()
	} else {
		// images are copied as they resolve: one still retrying its resolution delays nothing
		go func() {
			ps = resolveStream(ctx, rc, images, o, func(p *planned) {
				if p.Kind == KindSignature || p.Kind == KindReferrer {
					e.imagesTotal.Add(1)
				}
				in <- p
			})
			close(in)
		}()
	}
	e.run(ctx, in)
	stop()

	res := &Result{BytesPulled: e.bytesPulled.Load(), BlobsCopied: int(e.blobsCopied.Load()),
		BlobsMounted: int(e.blobsMounted.Load()), BlobsPresent: int(e.blobsPresent.Load())}
	for _, p := range ps {
		ir := imageResult(p)
		if p.err != nil {
			ir.Error = p.err.Error()
			res.Failed = append(res.Failed, ir)
		}
		res.Images = append(res.Images, ir)
	}
	res.SparseRefused = sortedKeys(e.refused)
	res.Warnings = sparseWarnings(res, o.Platforms)
	res.Duration = time.Since(start)
	if ctx.Err() != nil {
		return res, ctx.Err()
	}
	if len(res.Failed) > 0 {
		return res, &FailedError{Failed: res.Failed}
	}
	return res, nil
}

// engine holds one Copy's shared state.
type engine struct {
	rc *regclient.RegClient
	o  Options

	mu       sync.Mutex
	states   map[string]*blobState    // by digest: the global in-flight set
	tasks    map[string]*task         // by digest|destination repository
	counted  map[string]bool          // digests counted in bytesTotal
	subjects map[string]*sync.Mutex   // by destination repository@subject: referrer pushes
	refused  map[string]bool          // destination hosts that refused a sparse index
	accepted map[string]bool          // destination hosts that accepted one
	probes   map[string]chan struct{} // hosts whose answer one push is finding out
	repos    map[string]*repoState    // destination repositories asked whether they are new
	written  map[string]bool          // repositories Options.RepoLog names
	repoLog  *os.File                 // Options.RepoLog, open for appending; nil: HEAD every blob
	blobs    *blobLog                 // Options.BlobLog; nil: no record of confirmed blobs

	// set by run: schedule tasks and manifest pushes (a sparse index refused is scheduled again)
	start       func(*task)
	finishAsync func(*job)
	wg          *sync.WaitGroup
	committing  chan struct{} // transfers waiting on the destination's commit without a worker slot

	bytesDone, bytesTotal, bytesPulled      atomic.Int64
	imagesDone, imagesTotal, imagesFail     atomic.Int64
	tasksDone, tasksTotal                   atomic.Int64
	blobsCopied, blobsMounted, blobsPresent atomic.Int64
}

// job is one image waiting for its blobs; the worker finishing its last blob pushes its manifests.
type job struct {
	p       *planned
	pending atomic.Int64
	mu      sync.Mutex
	err     error
}

func (j *job) fail(err error) {
	j.mu.Lock()
	if j.err == nil {
		j.err = err
	}
	j.mu.Unlock()
}

// blobDone is called once per task of the job; the last one pushes the manifests.
func (e *engine) blobDone(ctx context.Context, j *job) {
	if j.pending.Add(-1) != 0 {
		return
	}
	e.finish(ctx, j)
}

// finish pushes the image's manifests (children first, root last, the tag last of all) unless a
// blob failed, and reports the image.
func (e *engine) finish(ctx context.Context, j *job) {
	j.mu.Lock()
	err := j.err
	j.mu.Unlock()
	if err == nil {
		err = e.pushManifests(ctx, j.p)
		if err != nil {
			var again bool
			if again, err = e.sparseFallback(j.p, err); again {
				return
			}
		}
	}
	if err != nil {
		j.p.err = err
		e.imagesFail.Add(1)
		return
	}
	e.imagesDone.Add(1)
	e.report(j.p)
}

func (e *engine) report(p *planned) {
	if e.o.ImageDone != nil {
		e.o.ImageDone(imageResult(p))
	}
}

func imageResult(p *planned) ImageResult {
	ir := ImageResult{Image: p.Image, Digest: p.digest, Size: p.size, Skipped: p.present}
	if p.full {
		ir.SparseRefused, ir.ExtraPlatforms, ir.ExtraBytes = true, p.skippedPlatforms, p.skippedSize
	}
	return ir
}

func (e *engine) pushManifests(ctx context.Context, p *planned) error {
	if len(p.manifests) > 0 {
		// Pushing a referrer to a registry without the referrers API makes regclient update the
		// subject's sha256-<hex> index tag (read, add, write): one referrer of a subject at a time.
		if sj, ok := p.manifests[len(p.manifests)-1].(manifest.Subjecter); ok {
			if sd, err := sj.GetSubject(); err == nil && sd != nil {
				unlock := e.lockSubject(p.dst.Registry + "/" + p.dst.Repository + "@" + sd.Digest.String())
				defer unlock()
			}
		}
	}
	for i, m := range p.manifests {
		last := i == len(p.manifests)-1
		d := m.GetDescriptor().Digest.String()
		target := p.dst.SetDigest(d)
		opts := []regclient.ManifestOpts{regclient.WithManifestChild()}
		if last {
			opts = nil
			if p.dstTag != "" {
				target = p.dst.SetTag(p.dstTag)
			}
		}
		sparse := last && p.skippedPlatforms > 0 && !p.full
		var verdict func(sparseState)
		if sparse {
			st, done := e.sparseTurn(ctx, target.Registry)
			if st == sparseRefused {
				return &manifestPushError{digest: d, root: true, err: fmt.Errorf("push manifest %s to %s: %w", d, target.CommonName(), errSparseRefused)}
			}
			verdict = done
		}
		err := e.o.retry(ctx, []string{target.Registry}, func(ctx context.Context) error {
			err := e.rc.ManifestPut(ctx, target, m, opts...)
			if sparse && missingContent(err) {
				return permanent(err) // a refused sparse index: pushing it again cannot help
			}
			return err
		})
		if err != nil {
			err = &manifestPushError{digest: d, root: last, err: fmt.Errorf("push manifest %s to %s: %w", d, target.CommonName(), err)}
		}
		if verdict != nil {
			switch {
			case err == nil:
				verdict(sparseAccepted)
			case sparseRefusal(err, p):
				verdict(sparseRefused)
			default:
				verdict(sparseUnknown) // failed for another reason: the next index finds out
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// lockSubject serializes the pushes of referrers of one subject.
func (e *engine) lockSubject(key string) (unlock func()) {
	e.mu.Lock()
	if e.subjects == nil {
		e.subjects = map[string]*sync.Mutex{}
	}
	m := e.subjects[key]
	if m == nil {
		m = &sync.Mutex{}
		e.subjects[key] = m
	}
	e.mu.Unlock()
	m.Lock()
	return m.Unlock
}

// startProgress calls the progress callback every interval until the returned stop is called,
// which also sends a final snapshot.
func (e *engine) startProgress(start time.Time) (stop func()) {
	if e.o.Progress == nil {
		return func() {}
	}
	every := e.o.ProgressInterval
	if every <= 0 {
		every = time.Second
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				e.o.Progress(e.snapshot(start))
				return
			case <-t.C:
				e.o.Progress(e.snapshot(start))
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

func (e *engine) snapshot(start time.Time) Progress {
	return Progress{BytesDone: e.bytesDone.Load(), BytesTotal: e.bytesTotal.Load(), BytesPulled: e.bytesPulled.Load(),
		ImagesDone: int(e.imagesDone.Load()), ImagesTotal: int(e.imagesTotal.Load()),
		BlobsDone: int(e.tasksDone.Load()), BlobsTotal: int(e.tasksTotal.Load()),
		Failed: int(e.imagesFail.Load()), Elapsed: time.Since(start)}
}

// errSharedBlob marks an image that failed because a blob it shares with another image failed.
var errSharedBlob = errors.New("shared blob failed")

// layoutNeed is the bytes of the images' blobs that the OCI layout in dir does not hold yet.
func layoutNeed(dir string, ps []*planned) int64 {
	var need int64
	seen := map[string]bool{}
	for _, p := range ps {
		if p.err != nil || p.present {
			continue
		}
		for _, b := range p.blobs {
			d := b.Digest
			if seen[string(d)] {
				continue
			}
			seen[string(d)] = true
			if fi, err := os.Stat(filepath.Join(dir, "blobs", d.Algorithm().String(), d.Encoded())); err == nil && fi.Size() == b.Size {
				continue
			}
			need += b.Size
		}
	}
	return need
}
