package mirror

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/mirror/mirrortest"
)

// backoffCounter is a slog handler counting the registry client's host-wide backoff sleeps.
type backoffCounter struct{ sleeps atomic.Int64 }

func (c *backoffCounter) Enabled(context.Context, slog.Level) bool { return true }
func (c *backoffCounter) Handle(_ context.Context, r slog.Record) error {
	if strings.Contains(r.Message, "backoff") {
		c.sleeps.Add(1)
	}
	return nil
}
func (c *backoffCounter) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c *backoffCounter) WithGroup(string) slog.Handler      { return c }

// brokenFirst returns the sample references with ocp/app-b first, so that its work is scheduled
// before everything else.
func brokenFirst(refs []string) []string {
	out := []string{}
	for _, r := range refs {
		if strings.Contains(r, "/ocp/app-b:") {
			out = append([]string{r}, out...)
		} else {
			out = append(out, r)
		}
	}
	return out
}

// TestCopyPermanent500RepoIsListedAndRestCopied: the source answers 500 for every request of one
// repository. That image is listed as failed, everything else is copied; each of its operations
// was tried exactly 1 + Retries times (per-operation retries, none by the registry client on top),
// no request to the registry was held back by a host-wide backoff, and the next run copies only
// what is missing.
//
// Two shapes: the whole repository fails (its manifests too, so it fails while resolving), and
// only its blobs fail (it is scheduled first, so the base layers it shares with other images are
// first asked from it: the others must then fetch them from their own repositories).
func TestCopyPermanent500RepoIsListedAndRestCopied(t *testing.T) {
	for _, path := range []string{"/ocp/app-b/", "/ocp/app-b/blobs/"} {
		t.Run(strings.Trim(path, "/"), func(t *testing.T) { testPermanent500(t, path) })
	}
}

func testPermanent500(t *testing.T, failPath string) {
	f := &mirrortest.Faults{FailPath: failPath}
	e, refs, images := brokenSample(t, f)
	o := e.opts()
	o.Retries = 3
	bc := &backoffCounter{}
	o.Log = slog.New(bc)
	f.Off.Store(false)
	res, err := Copy(ctx(t), images, o)
	var fe *FailedError
	if !errors.As(err, &fe) {
		t.Fatalf("want *FailedError for the broken repository, got %v", err)
	}
	if len(fe.Failed) != 1 || !strings.Contains(fe.Failed[0].Source, "/ocp/app-b:") || !strings.Contains(fe.Failed[0].Error, "500") {
		t.Fatalf("failed %+v, want only ocp/app-b with its 500", fe.Failed)
	}
	failed := f.Failed()
	if len(failed) == 0 {
		t.Fatal("the broken repository was never asked")
	}
	for req, n := range failed {
		if n != 1+o.Retries {
			t.Errorf("%s answered 500 %d times, want 1 + %d retries", req, n, o.Retries)
		}
	}
	if n := bc.sleeps.Load(); n != 0 {
		t.Errorf("the registry client slept %d times for a host-wide backoff; the other images must not wait for the broken one", n)
	}
	f.Off.Store(true)
	verifySucceeded(t, res, o, len(refs)-1)

	// the repository is fixed: the next run copies only it
	res2, err := Copy(ctx(t), images, o)
	if err != nil {
		t.Fatalf("second run: %v", err)
	}
	for _, im := range res2.Images {
		if broken := strings.Contains(im.Source, "/ocp/app-b:"); im.Skipped == broken {
			t.Errorf("second run: %s skipped=%v, want only ocp/app-b copied", im.Source, im.Skipped)
		}
	}
}

// TestCopyBackoffGivesWorkerBack: with one worker, an image whose unique layer fails is scheduled
// first and waits out an hour-long backoff. Every other image must be copied meanwhile: a task
// waiting to retry gives its worker back. (Were the worker held, nothing else would move and the
// test would fail at its guard.)
func TestCopyBackoffGivesWorkerBack(t *testing.T) {
	f := &mirrortest.Faults{}
	e, _, images := brokenSample(t, f)
	o := e.opts()
	o.Parallel = 1
	o.Retries = 3
	o.RetryBase, o.RetryMax = time.Hour, time.Hour

	// the layer only ocp/app-b has
	rc, err := newClient(o.withRun())
	if err != nil {
		t.Fatal(err)
	}
	ps := resolveAll(ctx(t), rc, images, o.withRun(), true)
	others := map[string]bool{}
	for _, p := range ps[1:] {
		for _, b := range p.blobs {
			others[string(b.Digest)] = true
		}
	}
	for _, b := range ps[0].blobs {
		if !others[string(b.Digest)] && b.MediaType != "" && !strings.Contains(b.MediaType, "config") {
			f.FailPath = "/ocp/app-b/blobs/" + string(b.Digest)
		}
	}
	if f.FailPath == "" {
		t.Fatal("the sample has no layer unique to ocp/app-b")
	}

	cctx, cancel := context.WithCancel(ctx(t))
	defer cancel()
	var healthy atomic.Int64
	allHealthy := make(chan struct{})
	o.ImageDone = func(r ImageResult) {
		if !strings.Contains(r.Source, "/ocp/app-b:") && healthy.Add(1) == int64(len(images)-1) {
			close(allHealthy)
		}
	}
	f.Off.Store(false)
	type out struct {
		res *Result
		err error
	}
	done := make(chan out, 1)
	go func() { r, err := Copy(cctx, images, o); done <- out{r, err} }()
	select {
	case <-allHealthy:
	case r := <-done:
		t.Fatalf("copy ended before every healthy image was copied: %v", r.err)
	case <-time.After(2 * time.Minute):
		t.Fatalf("only %d of %d healthy images copied while the broken one waited to retry: its worker was not given back",
			healthy.Load(), len(images)-1)
	}
	if n := f.InjectedPermanent.Load(); n != 1 {
		t.Errorf("the broken layer was asked %d times before its first backoff ended, want 1", n)
	}
	cancel()
	r := <-done
	if r.res == nil || len(r.res.Images) != len(images) {
		t.Fatalf("cancelled copy: %v %+v", r.err, r.res)
	}
	for _, im := range r.res.Images {
		if broken := strings.Contains(im.Source, "/ocp/app-b:"); (im.Error != "") != broken {
			t.Errorf("%s: error %q", im.Source, im.Error)
		}
	}
}

// TestCopyHostCircuit: a source registry whose certificate is not trusted is a whole-host
// failure. After circuitThreshold of them in a row, the other images of that host fail at once
// with a *HostDownError instead of each trying the host again.
func TestCopyHostCircuit(t *testing.T) {
	e := newEnv(t, nil)
	bad, err := mirrortest.StartRegistry(mirrortest.RegistryOptions{Dir: t.TempDir(), TLS: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(bad.Close)
	var srcs []string
	for i := range 8 {
		srcs = append(srcs, fmt.Sprintf("%s/ocp/img%d:v1", bad.Host, i))
	}
	images, _ := Images(srcs, KindAdditional, "", e.dst.Host, "mirror")
	o := e.opts()
	o.Source = Endpoint{} // verify TLS, no extra CA: the registry's self-signed certificate is refused
	o.Parallel = 1
	res, err := Copy(ctx(t), images, o)
	var fe *FailedError
	if !errors.As(err, &fe) || len(fe.Failed) != len(images) {
		t.Fatalf("want every image failed, got %v", err)
	}
	down := 0
	for i, im := range res.Images {
		isDown := strings.Contains(im.Error, "is down")
		if isDown {
			down++
		}
		if i < circuitThreshold && (isDown || !strings.Contains(im.Error, "certificate")) {
			t.Errorf("image %d: %q, want the certificate error itself", i, im.Error)
		}
	}
	if down != len(images)-circuitThreshold {
		t.Errorf("%d images failed fast on the open circuit, want %d", down, len(images)-circuitThreshold)
	}
}

// brokenSample starts the test registries with f in front of the source (off while the sample
// is pushed) and returns the sample's references and its images, ocp/app-b first.
func brokenSample(t *testing.T, f *mirrortest.Faults) (*testEnv, []string, []Image) {
	t.Helper()
	f.Off.Store(true)
	e := newEnv(t, f.Wrap)
	refs, err := e.b.Sample(ctx(t), e.src.Host, 16)
	if err != nil {
		t.Fatal(err)
	}
	images, err := Images(brokenFirst(refs), KindAdditional, "", e.dst.Host, "mirror")
	if err != nil {
		t.Fatal(err)
	}
	return e, refs, images
}

// verifySucceeded proves every image of res that did not fail is complete at the destination,
// and that there are want of them.
func verifySucceeded(t *testing.T, res *Result, o Options, want int) {
	t.Helper()
	var ok []ImageResult
	for _, im := range res.Images {
		if im.Error == "" {
			ok = append(ok, im)
		}
	}
	vr, err := Verify(ctx(t), Content{Images: ok}, o)
	if err != nil || len(vr.Missing) != 0 || vr.Images != want {
		t.Fatalf("verify of the mirrored images: %v %+v", err, vr)
	}
}
