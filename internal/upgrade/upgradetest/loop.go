package upgradetest

import (
	"context"
	"sync"
	"testing"
	"time"
)

// reconcileLoop runs reconcile every tick until the test ends, as a controller's resync does;
// the errors it returns are kept, and the count and the first are logged at the end as name's.
func reconcileLoop(t testing.TB, name string, tick time.Duration, reconcile func(context.Context) error) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	var mu sync.Mutex
	var errs []error
	go func() {
		defer close(done)
		tk := time.NewTicker(tick)
		defer tk.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tk.C:
			}
			if err := reconcile(ctx); err != nil && ctx.Err() == nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		mu.Lock()
		defer mu.Unlock()
		if len(errs) > 0 {
			t.Logf("%s errors (%d), first: %v", name, len(errs), errs[0])
		}
	})
}
