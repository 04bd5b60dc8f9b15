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

func benchOpts(concurrency int) []bmc.Option {
	return []bmc.Option{
		bmc.WithRetry(4, 200*time.Millisecond),
		bmc.WithPoll(200*time.Millisecond, 60*time.Second),
		bmc.WithConcurrency(concurrency),
	}
}

// slowestSingle boots one node of each firmware kind alone and returns the slowest time.
func slowestSingle(b *testing.B, url string) time.Duration {
	var worst time.Duration
	for _, fw := range []string{"6.10.30.00", "5.10.50.00", "4.10.10.10"} {
		o := benchSim
		o.Firmware = fw
		_, tg := simNode(b, "single-"+fw, o)
		start := time.Now()
		if _, err := bmc.BootNode(context.Background(), tg, url, newMemJournal(), benchOpts(1)...); err != nil {
			b.Fatal(err)
		}
		worst = max(worst, time.Since(start))
	}
	return worst
}

// BenchmarkBootAll reports the time to boot N nodes against the slowest single node
// ("x-single") with one worker per node, and at N=32 also with the default concurrency (8).
func BenchmarkBootAll(b *testing.B) {
	iso := bmctest.NewISOServer()
	defer iso.Close()
	url := iso.URL() + "/agent.x86_64.iso"
	single := slowestSingle(b, url)
	b.Logf("slowest single node: %s", single.Round(time.Millisecond))
	for _, n := range []int{8, 32, 128} {
		concs := []int{n}
		if n == 32 {
			concs = append(concs, 8)
		}
		for _, conc := range concs {
			b.Run(fmt.Sprintf("N=%d/concurrency=%d", n, conc), func(b *testing.B) {
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
