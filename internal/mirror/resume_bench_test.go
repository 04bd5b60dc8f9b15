package mirror

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/mirror/mirrortest"
)

// destCounter counts the destination's requests: all, and blob HEADs (existence checks).
type destCounter struct{ requests, heads atomic.Int64 }

func (c *destCounter) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.requests.Add(1)
		if r.Method == http.MethodHead && blobPath.MatchString(r.URL.Path) {
			c.heads.Add(1)
		}
		h.ServeHTTP(w, r)
	})
}

// BenchmarkResumeAfterLateKill mirrors BENCH_BLOBS (default 100,000) small blobs — 250 images of
// 400 layers — and interrupts the copy once 64 % of the blobs are at the destination, twice into
// separate namespaces; then it resumes one with the blob log the interrupted run kept and the
// other without it (what a resume cost before the log: an existence check for every blob the
// killed run had already written). It reports each resume's HEAD requests, all its destination
// requests and its wall time. The figure: a run killed at 64 % of 50,000 blobs re-checked
// 31,999 of them; with the log the resume checks only what the log does not name.
func BenchmarkResumeAfterLateKill(b *testing.B) {
	blobs := 100_000
	if v, err := strconv.Atoi(os.Getenv("BENCH_BLOBS")); err == nil && v > 0 {
		blobs = v
	}
	const perImage = 400
	nImages := max(blobs/perImage, 1)
	dc := &destCounter{}
	e := newEnvWrapped(b, nil, dc.wrap)
	ctx := b.Context()
	setup := time.Now()
	refs := make([]string, nImages)
	var wg sync.WaitGroup
	errs := make(chan error, nImages)
	sem := make(chan struct{}, 8)
	for i := range nImages {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			spec := mirrortest.ImageSpec{}
			for range perImage {
				spec.Layers = append(spec.Layers, e.b.Layer(16))
			}
			repo := fmt.Sprintf("%s/many/app-%04d", e.src.Host, i)
			if _, err := e.b.Image(ctx, repo, "v1", spec); err != nil {
				errs <- err
				return
			}
			refs[i] = repo + ":v1"
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
	b.Logf("source: %d images, %d blobs (+%d configs), pushed in %s", nImages, nImages*perImage, nImages, time.Since(setup).Round(time.Second))

	// interrupted copies images into namespace ns and cancels it once 64 % of the blobs are done;
	// it returns the images and the blob log the cancelled run left.
	interrupted := func(ns string) ([]Image, string) {
		images, err := Images(refs, KindAdditional, "", e.dst.Host, ns)
		if err != nil {
			b.Fatal(err)
		}
		o := e.opts()
		o.BlobLog = filepath.Join(b.TempDir(), "blobs.log")
		o.ProgressInterval = 50 * time.Millisecond
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		var at Progress
		o.Progress = func(p Progress) {
			if p.BlobsTotal > 0 && p.BlobsDone*100 >= p.BlobsTotal*64 && at.BlobsTotal == 0 {
				at = p
				cancel()
			}
		}
		t0 := time.Now()
		if _, err := Copy(cctx, images, o); err == nil || !errors.Is(cctx.Err(), context.Canceled) {
			b.Fatalf("the copy into %s was not interrupted: %v", ns, err)
		}
		b.Logf("%s: interrupted at %d of %d blobs after %s", ns, at.BlobsDone, at.BlobsTotal, time.Since(t0).Round(time.Second))
		return images, o.BlobLog
	}
	withImages, log := interrupted("with-log")
	withoutImages, _ := interrupted("without-log")

	resume := func(images []Image, blobLog string) (heads, requests int64, took time.Duration, res *Result) {
		o := e.opts()
		o.BlobLog = blobLog
		h0, r0 := dc.heads.Load(), dc.requests.Load()
		t0 := time.Now()
		res, err := Copy(ctx, images, o)
		if err != nil || len(res.Failed) > 0 {
			b.Fatalf("resume: %v (failed: %v)", err, res.Failed)
		}
		return dc.heads.Load() - h0, dc.requests.Load() - r0, time.Since(t0), res
	}
	b.ResetTimer()
	for b.Loop() {
		hw, rw, tw, resW := resume(withImages, log)
		ho, ro, to, resO := resume(withoutImages, "")
		b.ReportMetric(float64(hw), "heads-with-log")
		b.ReportMetric(float64(ho), "heads-without-log")
		b.ReportMetric(float64(rw), "requests-with-log")
		b.ReportMetric(float64(ro), "requests-without-log")
		b.ReportMetric(tw.Seconds(), "s-with-log")
		b.ReportMetric(to.Seconds(), "s-without-log")
		b.Logf("resume with the log: %d HEAD, %d requests, %s (%d copied, %d present); without: %d HEAD, %d requests, %s (%d copied, %d present)",
			hw, rw, tw.Round(time.Millisecond), resW.BlobsCopied, resW.BlobsPresent, ho, ro, to.Round(time.Millisecond), resO.BlobsCopied, resO.BlobsPresent)
		if hw >= ho {
			b.Errorf("the log saved no existence checks: %d HEAD with it, %d without", hw, ho)
		}
	}
}
