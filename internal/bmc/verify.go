package bmc

import (
	"context"
	"errors"
	"fmt"
)

// VerifyBooted checks, read-only, that a node still shows what a finished boot left: the ISO
// inserted in the virtual CD and the system powered on — or, for a node WithHandedOver accepts,
// what TakeOverrideOff leaves: no Cd override, the ISO ejected, powered on. The pipeline's Verify uses it before
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
		return newError(t.Node, StepInspect, err)
	}
	slot, ok := st.CDSlot()
	handedOver := cfg.handedOver != nil && cfg.handedOver(t.Node) && st.Boot.Target != "Cd" && !holds(st.Media, url)
	if !handedOver && (!ok || !holds(st.Media, url)) {
		return &Error{Node: t.Node, Op: StepMedia, Err: fmt.Errorf("virtual CD shows Inserted=%t Image=%q, want %q", slot.Inserted, slot.Image, url),
			remedy: "the media was changed since the boot: replay: bootstrap replay boot --node " + t.Node}
	}
	if st.Power != "On" {
		return &Error{Node: t.Node, Op: StepPower, Err: fmt.Errorf("power is %s", st.Power),
			remedy: "the server was powered off since the boot: replay: bootstrap replay boot --node " + t.Node}
	}
	return nil
}

func holds(media []Media, url string) bool {
	for _, m := range media {
		if m.Inserted && m.Image == url {
			return true
		}
	}
	return false
}

// VerifyAll runs VerifyBooted on every target, WithConcurrency at a time, and joins the errors.
func VerifyAll(ctx context.Context, targets []Target, urlFor func(node string) string, opts ...Option) error {
	cfg, err := newConfig(opts)
	if err != nil {
		return err
	}
	errs := make([]error, len(targets))
	forEach(len(targets), cfg.concurrency, func(i int) {
		errs[i] = VerifyBooted(ctx, targets[i], urlFor(targets[i].Node), opts...)
	})
	return errors.Join(errs...)
}
