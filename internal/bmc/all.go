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

// BootAll boots every target at once, at most WithConcurrency at a time (default 8). One node's
// failure never stops the others; the returned error joins every node's *Error.
func BootAll(ctx context.Context, targets []Target, urlFor func(node string) string, j Journal, opts ...Option) (Result, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return Result{}, err
	}
	res := Result{Nodes: make([]NodeResult, len(targets))}
	errs := make([]error, len(targets))
	sem := make(chan struct{}, cfg.concurrency)
	var wg sync.WaitGroup
	for i, t := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				res.Nodes[i] = NodeResult{Node: t.Node, Error: ctx.Err().Error()}
				errs[i] = &Error{Node: t.Node, Op: StepConnect, Err: ctx.Err()}
				return
			}
			defer func() { <-sem }()
			res.Nodes[i], errs[i] = bootNode(ctx, t, urlFor(t.Node), j, cfg)
		}()
	}
	wg.Wait()
	for i, e := range errs {
		if e != nil {
			res.Failed = append(res.Failed, targets[i].Node)
		}
	}
	sort.Strings(res.Failed)
	return res, errors.Join(errs...)
}
