package bmc

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
)

// errNoOEM is returned when a vendor is asked for an OEM method it does not have.
var errNoOEM = errors.New("this BMC has no OEM boot method")

// ErrMediaStuck is a slot that still holds media after an eject (or shows other media than the
// one inserted): the slot and the fix are in the error's message and remedy.
var ErrMediaStuck = errors.New("virtual media slot did not change")

// rawInsert puts url into slot through the small Redfish client: the slot's InsertMedia action
// when it has one, or a PATCH of Image/Inserted (DMTF's mockups, some OpenBMC builds: the slot
// has no actions). The action's body carries what the BMC requires (vmedia.go): the parameters
// its ActionInfo marks required, those a refusal names, and on a second try Image without
// Inserted/WriteProtected, which some BMCs refuse.
func (c *Client) rawInsert(ctx context.Context, slot Media, url string) error {
	if slot.InsertTarget != "" {
		need := slot.InsertRequired
		post := func(full bool) error {
			return retry(ctx, c.cfg, func() error {
				return c.raw.do(ctx, http.MethodPost, slot.InsertTarget, insertBody(url, full, need), nil, nil)
			})
		}
		err := post(true)
		for try := 0; try < 2; try++ {
			var re *RedfishError
			if !errors.As(err, &re) || re.Status != http.StatusBadRequest || re.Has(MsgMediaUnreachable) {
				break
			}
			for _, p := range missingParams(err) {
				if !slices.Contains(need, p) {
					need = append(need, p)
				}
			}
			err = post(false)
		}
		return err
	}
	if !slot.Patchable() {
		return fmt.Errorf("slot %s has no InsertMedia action and does not take PATCH (Allow: %v)", slot.Path, slot.Allow)
	}
	return retry(ctx, c.cfg, func() error {
		return c.patch(ctx, slot.Path, map[string]any{"Image": url, "Inserted": true})
	})
}

// rawEject empties slot: its EjectMedia action, or a PATCH of Image/Inserted.
func (c *Client) rawEject(ctx context.Context, slot Media) error {
	if slot.EjectTarget != "" {
		return retry(ctx, c.cfg, func() error {
			return c.raw.do(ctx, http.MethodPost, slot.EjectTarget, map[string]any{}, nil, nil)
		})
	}
	if !slot.Patchable() {
		return fmt.Errorf("slot %s has no EjectMedia action and does not take PATCH (Allow: %v)", slot.Path, slot.Allow)
	}
	return retry(ctx, c.cfg, func() error {
		return c.patch(ctx, slot.Path, map[string]any{"Image": nil, "Inserted": false})
	})
}

// readSlot reads one slot back.
func (c *Client) readSlot(ctx context.Context, st *State, path string) (Media, error) {
	media, err := c.readMedia(ctx, st.mediaPath)
	if err != nil {
		return Media{}, err
	}
	st.Media = media
	for _, m := range media {
		if m.Path == path {
			return m, nil
		}
	}
	return Media{}, fmt.Errorf("slot %s is gone from %s", path, st.mediaPath)
}

// ejectChecked ejects one slot and reads it back: a slot still inserted afterwards is
// ErrMediaStuck naming the slot (bmclib and some BMCs report success without doing anything).
func (c *Client) ejectChecked(ctx context.Context, st *State, m Media) error {
	if !m.CanEject() {
		return &Error{Node: c.node, Op: StepMedia, Err: fmt.Errorf("%w: slot %s holds %q and has neither an EjectMedia action nor PATCH", ErrMediaStuck, m.Path, m.Image),
			remedy: stuckRemedy(st, m, c.node)}
	}
	if err := st.vendor.ejectMedia(ctx, c, m); err != nil {
		return fmt.Errorf("eject %s (%s): %w", m.Path, m.Image, err)
	}
	got, err := c.settle(ctx, st, m.Path, func(m Media) bool { return !m.Inserted })
	if err != nil {
		return err
	}
	if got.Inserted {
		return &Error{Node: c.node, Op: StepMedia, Err: fmt.Errorf("%w: slot %s still shows Inserted=true Image=%q after eject (read back)", ErrMediaStuck, m.Path, got.Image),
			remedy: stuckRemedy(st, m, c.node)}
	}
	return nil
}

func stuckRemedy(st *State, m Media, node string) string {
	return fmt.Sprintf("disconnect the media in slot %s (%s) by hand in %s's web UI or virtual console (close any session using it), then replay: bootstrap replay boot --node %s",
		m.ID, m.Image, controllerOf(st), node)
}
