package bmc

import (
	"context"
	"errors"
	"sort"
	"sync"
)

// Result is the outcome of BootAll: one entry per node, in the order given, and the failed names.
type Result struct {
	Nodes  []NodeResult `json:"nodes"`
	Failed []string     `json:"failed,omitempty"`
}

// BootAll boots every target at once, at most WithConcurrency at a time (default: all of them,
// MaxConcurrency at most). One node's
// failure never stops the others; the returned error joins every node's *Error.
func BootAll(ctx context.Context, targets []Target, urlFor func(node string) string, j Journal, opts ...Option) (Result, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return Result{}, err
	}
	res := Result{Nodes: make([]NodeResult, len(targets))}
	errs := make([]error, len(targets))
	// Workers take nodes in profile order, so who goes first is deterministic and explainable.
	forEach(len(targets), cfg.concurrency, func(i int) {
		t := targets[i]
		if err := ctx.Err(); err != nil {
			res.Nodes[i] = NodeResult{Node: t.Node, Error: err.Error()}
			errs[i] = &Error{Node: t.Node, Op: StepConnect, Err: err}
			return
		}
		res.Nodes[i], errs[i] = bootNode(ctx, t, urlFor(t.Node), j, cfg)
	})
	for i, e := range errs {
		if e != nil {
			res.Failed = append(res.Failed, targets[i].Node)
		}
	}
	sort.Strings(res.Failed)
	return res, errors.Join(errs...)
}

// forEach calls f(0..n-1) on at most workers goroutines (0: n, MaxConcurrency at most),
// handing out indexes in order.
func forEach(n, workers int, f func(i int)) {
	if workers <= 0 {
		workers = min(n, MaxConcurrency)
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < min(workers, n); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f(i)
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
}
