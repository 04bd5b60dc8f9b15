package bmc

import (
	"context"
	"fmt"
	"net/http"
)

// Handover is what TakeOverrideOff left on one node; it holds no secret and goes to the journal.
type Handover struct {
	Node string `json:"node"`
	// Override is the boot override read back afterwards, Target/Enabled.
	Override string `json:"override"`
	// Ejected names the slots emptied (read back), when ejecting was asked.
	Ejected []string `json:"ejected,omitempty"`
	// Already is set when the BMC showed the node handed over before anything was sent.
	Already bool `json:"already,omitempty"`
}

// TakeOverrideOff hands an installed node over to its disk: a Cd boot override is set back to
// None (or to Hdd where the BMC keeps every override Continuous) and, with eject, the virtual
// media holding url are ejected; each is read back. It is what a BMC that did not honour a
// one-time boot needs once the node has written its disk, so the node never boots the ISO again
// (Ironic does the same after a deploy). Idempotent: a node already handed over is only read.
func TakeOverrideOff(ctx context.Context, t Target, url string, eject bool, opts ...Option) (Handover, error) {
	h := Handover{Node: t.Node}
	cfg, err := newConfig(opts)
	if err != nil {
		return h, err
	}
	c, err := dial(ctx, t, cfg)
	if err != nil {
		return h, err
	}
	defer c.raw.hc.CloseIdleConnections()
	st, err := c.inspect(ctx, false)
	if err != nil {
		return h, newError(t.Node, StepHandover, err)
	}
	fail := func(err error) (Handover, error) {
		be := newError(t.Node, StepHandover, err)
		reword(&st, be)
		return h, be
	}
	sent := false
	for _, boot := range []map[string]string{
		{"BootSourceOverrideTarget": "None", "BootSourceOverrideEnabled": "Disabled"},
		{"BootSourceOverrideTarget": "Hdd", "BootSourceOverrideEnabled": "Continuous"}, // BMCs that keep Continuous and refuse None
	} {
		if st.Boot.Target != "Cd" {
			break
		}
		sent = true
		err := retry(ctx, cfg, func() error {
			return c.patch(ctx, st.systemPath, map[string]any{"Boot": boot})
		})
		var re *RedfishError
		if err != nil && !(asRedfish(err, &re) && re.Status == http.StatusBadRequest) {
			return fail(fmt.Errorf("take the Cd boot override off: %w", err))
		}
		if err := c.readBoot(ctx, &st, MethodStandard); err != nil {
			return fail(err)
		}
	}
	if st.Boot.Target == "Cd" {
		return fail(fmt.Errorf("read-back: boot override still %s/%s after setting None and Hdd", st.Boot.Target, st.Boot.Enabled))
	}
	h.Override = st.Boot.Target + "/" + st.Boot.Enabled
	if eject {
		for _, m := range st.Media {
			if m.Inserted && m.Image == url {
				sent = true
				if err := c.ejectChecked(ctx, &st, m); err != nil {
					return fail(err)
				}
				h.Ejected = append(h.Ejected, m.Path)
			}
		}
	}
	h.Already = !sent
	return h, nil
}
