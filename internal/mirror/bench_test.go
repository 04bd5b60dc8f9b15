package mirror

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/mirror/mirrortest"
)

// BenchmarkCopy mirrors a sample set (shared base layers, a multi-arch index) into a fresh
// namespace per iteration and reports throughput and bytes read from the source per unique byte
// (1.00 means every shared blob was fetched once). Registries run in process: the figure compares
// runs of this code, the bench/mirror.sh harness compares with peers.
func BenchmarkCopy(b *testing.B) {
	e := newEnvB(b)
	refs, err := e.b.Sample(b.Context(), e.src.Host, 512)
	if err != nil {
		b.Fatal(err)
	}
	o := e.opts()
	first, _ := Images(refs, KindAdditional, "", e.dst.Host, "plan")
	plan, err := Plan(b.Context(), first, o)
	if err != nil {
		b.Fatal(err)
	}
	var unique, pulled int64
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		images, _ := Images(refs, KindAdditional, "", e.dst.Host, fmt.Sprintf("run%d", i))
		before := e.srcCount.blobBytes.Load()
		if _, err := Copy(b.Context(), images, o); err != nil {
			b.Fatal(err)
		}
		pulled += e.srcCount.blobBytes.Load() - before
		unique += plan.UniqueBytes
	}
	b.SetBytes(unique / int64(max(b.N, 1)))
	b.ReportMetric(float64(pulled)/float64(max(unique, 1)), "src-bytes/unique-byte")
}

// BenchmarkCopyOneBrokenRepo mirrors the sample set while the source answers 500 for every
// request of one repository, with the default retry policy, and reports when the healthy images
// were all at the destination (healthy-ms/op) next to the whole run (ns/op, which includes the
// broken image's own retry schedule, about 3.5 s with the defaults). Compare healthy-ms with
// BenchmarkCopy's ns/op: the broken repository must not delay the others.
func BenchmarkCopyOneBrokenRepo(b *testing.B) {
	f := &mirrortest.Faults{FailPath: "/ocp/app-b/"}
	f.Off.Store(true)
	e := newEnvTB(b, f.Wrap)
	refs, err := e.b.Sample(b.Context(), e.src.Host, 512)
	if err != nil {
		b.Fatal(err)
	}
	f.Off.Store(false)
	o := e.opts()
	d := DefaultOptions(Dest{})
	o.Retries, o.RetryBase, o.RetryMax = d.Retries, d.RetryBase, d.RetryMax
	var healthy time.Duration
	for i := 0; b.Loop(); i++ {
		images, _ := Images(refs, KindAdditional, "", e.dst.Host, fmt.Sprintf("run%d", i))
		start := time.Now()
		var mu sync.Mutex
		var last time.Time
		o.ImageDone = func(ImageResult) { mu.Lock(); last = time.Now(); mu.Unlock() }
		_, err := Copy(b.Context(), images, o)
		var fe *FailedError
		if !errors.As(err, &fe) || len(fe.Failed) != 1 {
			b.Fatalf("want only the broken image failed, got %v", err)
		}
		healthy += last.Sub(start)
	}
	b.ReportMetric(float64(healthy.Milliseconds())/float64(max(b.N, 1)), "healthy-ms/op")
	b.ReportMetric(float64(f.InjectedPermanent.Load())/float64(max(b.N, 1)), "broken-attempts/op")
}
