package mirror

import (
	"fmt"
	"testing"
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
