package bmc

import (
	"context"
	"fmt"
)

// VerifyBooted checks, read-only, that a node still shows what a finished boot left: the ISO
// inserted in the virtual CD and the system powered on. The pipeline's Verify uses it before
// skipping a finished boot stage.
func VerifyBooted(ctx context.Context, t Target, url string, opts ...Option) error {
	cfg, err := newConfig(opts)
	if err != nil {
		return err
	}
	c, err := dial(ctx, t, cfg)
	if err != nil {
		return err
	}
	defer c.raw.hc.CloseIdleConnections()
	st, err := c.Inspect(ctx)
	if err != nil {
		return &Error{Node: t.Node, Op: StepInspect, Err: err, Remedy: remedyFor(StepInspect, err)}
	}
	slot, ok := st.CDSlot()
	if !ok || !slot.Inserted || slot.Image != url {
		return &Error{Node: t.Node, Op: StepMedia, Err: fmt.Errorf("virtual CD shows Inserted=%t Image=%q, want %q", slot.Inserted, slot.Image, url),
			Remedy: "the media was changed since the boot: replay: bootstrap replay boot --node " + t.Node}
	}
	if st.Power != "On" {
		return &Error{Node: t.Node, Op: StepPower, Err: fmt.Errorf("power is %s", st.Power),
			Remedy: "the server was powered off since the boot: replay: bootstrap replay boot --node " + t.Node}
	}
	return nil
}
