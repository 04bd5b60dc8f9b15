package bmc_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/bmc"
	"github.com/bootstrap-dev/bootstrap/internal/bmc/bmctest"
)

// Realistic-shaped timings, scaled down: an iDRAC9 answers a Redfish call in 100–500 ms and a
// server takes minutes to reach its boot manager; here a call takes 100 ms, a boot 1 s and an
// ImportSystemConfiguration job 300 ms, with reads polled every 200 ms.
var benchSim = bmctest.Options{Latency: 100 * time.Millisecond, BootDelay: time.Second, JobDelay: 300 * time.Millisecond}

// benchOpts are the options of a run; concurrency 0 keeps the default (every node at once).
func benchOpts(concurrency int) []bmc.Option {
	o := []bmc.Option{
		bmc.WithRetry(4, 200*time.Millisecond),
		bmc.WithPoll(200*time.Millisecond, 60*time.Second),
	}
	if concurrency > 0 {
		o = append(o, bmc.WithConcurrency(concurrency))
	}
	return o
}

// slowestSingle boots one node of each kind the fleet mixes (iDRAC9 firmware kinds, generic,
// PATCH-only) alone and returns the slowest time.
func slowestSingle(b *testing.B, url string) time.Duration {
	var worst time.Duration
	kinds := []bmctest.Options{{Firmware: "6.10.30.00"}, {Firmware: "5.10.50.00"}, {Firmware: "4.10.10.10"},
		{Profile: bmctest.ProfileGeneric}, {Profile: bmctest.ProfilePatchOnly}}
	for i, k := range kinds {
		o := benchSim
		o.Firmware, o.Profile = k.Firmware, k.Profile
		_, tg := simNode(b, fmt.Sprintf("single-%d", i), o)
		start := time.Now()
		if _, err := bmc.BootNode(context.Background(), tg, url, newMemJournal(), benchOpts(1)...); err != nil {
			b.Fatal(err)
		}
		worst = max(worst, time.Since(start))
	}
	return worst
}

// BenchmarkBootAll reports the time to boot N nodes of a mixed fleet (startFleet) against the
// slowest single node ("x-single") at the default concurrency (every node at once), and at N=32
// also with 8 workers, the default before. The target: 128 nodes at the default within 1.5×
// the single node.
func BenchmarkBootAll(b *testing.B) {
	iso := bmctest.NewISOServer()
	defer iso.Close()
	url := iso.URL() + "/agent.x86_64.iso"
	single := slowestSingle(b, url)
	b.Logf("slowest single node: %s", single.Round(time.Millisecond))
	for _, n := range []int{8, 32, 128} {
		concs := []int{0}
		if n == 32 {
			concs = append(concs, 8)
		}
		for _, conc := range concs {
			name := fmt.Sprintf("N=%d/concurrency=%d", n, conc)
			if conc == 0 {
				name = fmt.Sprintf("N=%d/concurrency=default", n)
			}
			b.Run(name, func(b *testing.B) {
				var total time.Duration
				for i := 0; i < b.N; i++ {
					b.StopTimer()
					_, targets := startFleet(b, n, benchSim)
					b.StartTimer()
					start := time.Now()
					if _, err := bmc.BootAll(context.Background(), targets, func(string) string { return url }, newMemJournal(), benchOpts(conc)...); err != nil {
						b.Fatal(err)
					}
					total += time.Since(start)
				}
				avg := total / time.Duration(b.N)
				b.ReportMetric(avg.Seconds(), "s/boot-all")
				b.ReportMetric(avg.Seconds()/single.Seconds(), "x-single")
				b.ReportMetric(float64(n)/avg.Seconds(), "nodes/s")
			})
		}
	}
}
