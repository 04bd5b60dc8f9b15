package bmctest

import (
	"context"
	"fmt"
)

// What a test does to a simulated server besides Redfish: wait for it, or act on it as a person
// or another party would.

// Idle returns once no boot is pending: every power action the simulator accepted has reached its
// boot (BootedFrom, Boots and the override are final), or the simulator is closed. Tests wait on
// it, instead of sleeping, before they count what a run did.
func (b *BMC) Idle(ctx context.Context) error {
	b.mu.Lock()
	if b.pending == 0 || b.closed {
		b.mu.Unlock()
		return nil
	}
	ch := make(chan struct{})
	b.idle = append(b.idle, ch)
	b.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("simulated BMC not idle: %w", ctx.Err())
	}
}

// wakeIdle releases the Idle callers when nothing is pending; b.mu is held.
func (b *BMC) wakeIdle() {
	if b.pending > 0 && !b.closed {
		return
	}
	for _, ch := range b.idle {
		close(ch)
	}
	b.idle = nil
}

// PullPlug powers the server off as a person would at its power button (no Redfish request).
func (b *BMC) PullPlug() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.power = "Off"
	b.bootGen++
}

// EjectAll empties every virtual-media slot as another party would (its web UI).
func (b *BMC) EjectAll() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, m := range b.media {
		m.Inserted, m.Image = false, ""
	}
}

// PowerCycleByHand is the remedy of a reset that did nothing, done: the server is power-cycled
// at its button (booting whatever it is armed with) and its BMC takes resets again.
func (b *BMC) PowerCycleByHand() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.opts.NoopReset = false
	if b.power != "Off" {
		b.startBoot()
	}
}
