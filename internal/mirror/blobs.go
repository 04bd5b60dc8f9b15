package mirror

import (
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/regclient/regclient/types/descriptor"
	"github.com/regclient/regclient/types/ref"
)

// blobState is one digest in the global in-flight set. The first task for a digest transfers it;
// tasks for the same digest in other destination repositories that arrive meanwhile wait as
// followers and are then served by a cross-repository mount from the repository that got it.
type blobState struct {
	inflight  bool
	err       error
	repo      ref.Ref // a destination repository that holds the blob
	src       ref.Ref // the source repository of the last transfer attempt
	followers []*task
}

// task is one blob needed in one destination repository, by one or more images. Images resolved
// while the task runs join it (jobs); once it is done, an image needing the same blob in the same
// repository gets its outcome at once.
type task struct {
	desc     descriptor.Descriptor
	src, dst ref.Ref // repository references (no tag or digest)
	jobs     []*job  // under engine.mu
	done     bool
	err      error
}

// add schedules one resolved image: failed and present images are counted at once; the blobs of
// the others become tasks, one per (digest, destination repository), shared with the images
// already scheduled. start runs a new task. The image's manifests are pushed by whichever
// goroutine completes its last blob (finish).
func (e *engine) add(p *planned, start func(*task), finishAsync func(*job)) {
	switch {
	case p.err != nil:
		e.imagesFail.Add(1)
		return
	case p.present:
		e.imagesDone.Add(1)
		e.report(p)
		return
	case p.skippedPlatforms > 0 && !p.full && e.isRefused(p.dst.Registry):
		// this registry refused a sparse index already: copy the whole index at once
		if p.skippedErr != nil {
			p.err = noFallbackError(p)
			e.imagesFail.Add(1)
			return
		}
		p.expand()
	}
	j := &job{p: p}
	j.pending.Store(int64(len(p.blobs)) + 1) // +1 until every blob is attached
	srcRepo, dstRepo := p.src.SetDigest(""), p.dst.SetDigest("")
	for _, b := range p.blobs {
		k := string(b.Digest) + "|" + dstRepo.Registry + "/" + dstRepo.Repository
		e.mu.Lock()
		if !e.counted[string(b.Digest)] {
			e.counted[string(b.Digest)] = true
			e.bytesTotal.Add(b.Size)
		}
		t := e.tasks[k]
		isNew, done, terr := false, false, error(nil)
		switch {
		case t == nil:
			t = &task{desc: b, src: srcRepo, dst: dstRepo, jobs: []*job{j}}
			e.tasks[k] = t
			e.tasksTotal.Add(1)
			isNew = true
		case !t.done:
			t.jobs = append(t.jobs, j)
		default:
			done, terr = true, t.err
		}
		e.mu.Unlock()
		if isNew {
			start(t)
		}
		if done {
			if terr != nil {
				j.fail(fmt.Errorf("blob %s: %w", b.Digest, terr))
			}
			j.pending.Add(-1) // never the last: the +1 is still held
		}
	}
	// drop the +1: when every blob is done already (or there is none), the manifests are pushed
	// on a worker slot of their own; otherwise the worker finishing the last blob pushes them
	if j.pending.Add(-1) == 0 {
		finishAsync(j)
	}
}

// run copies the images resolved on in, queueing each image's blobs as soon as it is resolved (an
// image still retrying its resolution holds nothing back), with at most o.Parallel tasks at work.
// Waiting tasks start largest blob first: the run's length is bounded below by its largest blob
// streaming alone, so starting those first keeps every worker busy until the end instead of one
// late 200 MB layer running by itself while the others sit idle (longest-processing-time-first;
// ties go in the order the tasks were queued, so the order is deterministic for one plan). A task
// waiting out a retry backoff gives its slot back (sleepWithoutSlot), so a failing image never
// holds workers the others could use.
func (e *engine) run(ctx context.Context, in <-chan *planned) {
	slots := make(chan struct{}, e.o.Parallel)
	wctx := withSlot(ctx, slots)
	e.committing = make(chan struct{}, e.o.Parallel)
	var wg sync.WaitGroup
	e.wg = &wg
	q := newTaskQueue()
	start := func(t *task) {
		wg.Add(1) // done when the task has run
		q.push(t)
	}
	dispatched := make(chan struct{})
	go func() {
		defer close(dispatched)
		// wait for work before taking a slot (a manifest push waiting for a slot must never wait
		// on an idle dispatcher), then take the largest task queued by the time a slot is free
		for q.wait() {
			slots <- struct{}{}
			t := q.pop()
			go func() {
				defer func() { <-slots; wg.Done() }()
				if ctx.Err() != nil {
					e.complete(wctx, t, ctx.Err())
					return
				}
				e.do(wctx, t)
			}()
		}
	}()
	finishAsync := func(j *job) {
		slots <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-slots; wg.Done() }()
			e.finish(wctx, j)
		}()
	}
	e.start, e.finishAsync = start, finishAsync
	for p := range in {
		e.add(p, start, finishAsync)
	}
	wg.Wait()
	q.close()
	<-dispatched
}

// do runs one task against the global in-flight set.
func (e *engine) do(ctx context.Context, t *task) {
	d := string(t.desc.Digest)
	e.mu.Lock()
	st := e.states[d]
	switch {
	case st == nil:
		st = &blobState{inflight: true, src: t.src}
		e.states[d] = st
		e.mu.Unlock()
		err := e.transfer(ctx, t, true)
		e.mu.Lock()
		st.inflight, st.err = false, err
		if err == nil {
			st.repo = t.dst
		}
		followers := st.followers
		st.followers = nil
		e.mu.Unlock()
		e.complete(ctx, t, err)
		for _, f := range followers {
			e.follow(ctx, f, st)
		}
	case st.inflight:
		st.followers = append(st.followers, t)
		e.mu.Unlock()
	default:
		e.mu.Unlock()
		e.follow(ctx, t, st)
	}
}

// follow serves a task whose digest another task already handled: mount from the repository that
// has it (falling back to a transfer). When the blob failed, a task reading another source
// repository fetches it from there (a repository that answers 500 must not fail the images that
// share a layer with it); a task reading the same repository fails with the shared blob's error
// at once, and the next run retries it.
func (e *engine) follow(ctx context.Context, t *task, st *blobState) {
	e.mu.Lock()
	from, perr, psrc := st.repo, st.err, st.src
	e.mu.Unlock()
	if perr != nil {
		if psrc.Registry == t.src.Registry && psrc.Repository == t.src.Repository {
			e.complete(ctx, t, fmt.Errorf("%w: %s: %w", errSharedBlob, t.desc.Digest, perr))
			return
		}
		err := e.transfer(ctx, t, true)
		e.mu.Lock()
		if err == nil {
			st.err, st.repo = nil, t.dst
		} else {
			st.src = t.src
		}
		e.mu.Unlock()
		e.complete(ctx, t, err)
		return
	}
	if from.Registry == t.dst.Registry && from.Repository == t.dst.Repository {
		e.complete(ctx, t, nil)
		return
	}
	if e.confirmed(t) {
		e.complete(ctx, t, nil)
		return
	}
	e.freshRepo(ctx, t.dst) // recorded in the repository log before the mount writes to it
	err := e.o.retry(ctx, []string{t.dst.Registry}, func(ctx context.Context) error {
		return e.rc.BlobMount(ctx, from, t.dst, t.desc)
	})
	if err == nil {
		e.blobsMounted.Add(1)
		e.confirm(t)
	} else {
		e.o.logger().Debug("mount failed, copying", "digest", t.desc.Digest, "err", err)
		err = e.transfer(ctx, t, false)
	}
	e.complete(ctx, t, err)
}

// complete records a task's outcome and reports it to every image waiting on it.
func (e *engine) complete(ctx context.Context, t *task, err error) {
	e.mu.Lock()
	if !t.done {
		e.tasksDone.Add(1)
	}
	t.done, t.err = true, err
	jobs := t.jobs
	t.jobs = nil
	e.mu.Unlock()
	for _, j := range jobs {
		if err != nil {
			j.fail(fmt.Errorf("blob %s: %w", t.desc.Digest, err))
		}
		e.blobDone(ctx, j)
	}
}

// transfer makes the blob exist in t.dst: HEAD first (not in a fresh repository, see freshRepo),
// then a streamed GET from the source into a monolithic PUT. regclient's blob reader hashes every
// byte and fails the read at EOF on a size or digest mismatch, so a corrupt source blob aborts the
// upload before the registry commits it (and the registry checks the digest again). primary says whether its bytes count toward BytesDone.
//
// Once the body is sent (the verified EOF), the source response is closed and the worker slot is
// lent out until the PUT answers: what is left is the destination committing the blob, and a
// registry on a local filesystem syncs it to disk first (distribution fsyncs every blob it
// commits). A burst of large commits would otherwise hold every worker in disk waits with the
// CPUs idle; meanwhile other transfers run. At most Parallel transfers wait on a commit this way
// (e.committing), so requests in flight stay within twice Parallel.
func (e *engine) transfer(ctx context.Context, t *task, primary bool) error {
	if e.confirmed(t) {
		e.blobsPresent.Add(1)
		if primary {
			e.bytesDone.Add(t.desc.Size)
		}
		return nil
	}
	skipHead := e.freshRepo(ctx, t.dst)
	return e.o.retry(ctx, []string{t.src.Registry, t.dst.Registry}, func(ctx context.Context) error {
		if skipHead {
			skipHead = false // a retry checks: the failed attempt may have committed the blob
		} else if _, err := e.rc.BlobHead(ctx, t.dst, t.desc); err == nil {
			e.confirm(t)
			e.blobsPresent.Add(1)
			if primary {
				e.bytesDone.Add(t.desc.Size)
			}
			return nil
		}
		rdr, err := e.rc.BlobGet(ctx, t.src, t.desc)
		if err != nil {
			return onHost(t.src.Registry, fmt.Errorf("get from %s: %w", t.src.CommonName(), err))
		}
		defer rdr.Close()
		cr := &countReader{r: rdr, pulled: &e.bytesPulled}
		if primary {
			cr.done = &e.bytesDone
		}
		slots := slotFrom(ctx)
		lent := false
		if slots != nil && e.committing != nil {
			cr.onEOF = func() {
				rdr.Close() // every byte read and verified: free the source connection now
				select {
				case e.committing <- struct{}{}:
					<-slots
					lent = true
				default: // Parallel commits waiting already: keep the slot
				}
			}
		}
		_, err = e.rc.BlobPut(ctx, t.dst, t.desc, cr)
		if lent {
			slots <- struct{}{} // taken back even when cancelled: the caller's deferred release expects it
			<-e.committing
		}
		if err != nil {
			if primary {
				e.bytesDone.Add(-cr.n)
			}
			if cr.err != nil { // the source stream broke, not the destination
				return onHost(t.src.Registry, fmt.Errorf("get from %s: %w", t.src.CommonName(), cr.err))
			}
			return onHost(t.dst.Registry, fmt.Errorf("put to %s: %w", t.dst.CommonName(), err))
		}
		e.blobsCopied.Add(1)
		e.confirm(t)
		return nil
	})
}

// confirmed says whether the blob log records t's blob in t's destination repository.
func (e *engine) confirmed(t *task) bool {
	return e.blobs != nil && e.blobs.has(t.desc.Digest, t.dst.Registry+"/"+t.dst.Repository)
}

// confirm records in the blob log that the destination confirmed t's blob.
func (e *engine) confirm(t *task) {
	if e.blobs != nil {
		e.blobs.add(t.desc.Digest, t.dst.Registry+"/"+t.dst.Repository)
	}
}

// countReader counts bytes for progress. It deliberately hides any Seek method of the underlying
// reader, so regclient never falls back to a chunked upload that would buffer chunks in memory.
type countReader struct {
	r            io.Reader
	n            int64
	err          error // the source's read error, other than EOF
	pulled, done *atomic.Int64
	onEOF        func() // called once, on the first io.EOF
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if n > 0 {
		c.n += int64(n)
		c.pulled.Add(int64(n))
		if c.done != nil {
			c.done.Add(int64(n))
		}
	}
	if err != nil && err != io.EOF {
		c.err = err
	}
	if err == io.EOF && c.onEOF != nil {
		f := c.onEOF
		c.onEOF = nil
		f()
	}
	return n, err
}
