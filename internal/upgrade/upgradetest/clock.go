package upgradetest

import (
	"sync"
	"time"
)

// Clock is a compressed clock: Factor seconds of cluster time pass per real second, so the
// product's thresholds (an operator degraded 40 minutes) trip in seconds while every timestamp
// the simulators write and the watcher reads stays on one consistent time line.
type Clock struct {
	Factor float64

	once  sync.Once
	start time.Time
	base  time.Time
}

// Now is the compressed time.
func (c *Clock) Now() time.Time {
	c.once.Do(func() { c.start = time.Now(); c.base = c.start })
	return c.base.Add(time.Duration(float64(time.Since(c.start)) * c.Factor))
}
