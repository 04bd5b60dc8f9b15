package bmc

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// MaxMediaURL is the longest image URL iDRAC9 accepts in VirtualMedia.InsertMedia: it refuses
// an Image over 255 characters (ActionParameterValueFormatError). The ISO server (agentiso.URL)
// and preflight use the same limit.
const MaxMediaURL = 255

// ensureMedia leaves the ISO inserted in the CD slot: stale media are ejected ("already
// detached" tolerated), the ISO inserted through bmclib, and the slot read back.
func (c *Client) ensureMedia(ctx context.Context, st *State, url string, j Journal, cfg config) error {
	if slot, ok := st.CDSlot(); ok && slot.Inserted && slot.Image == url && onlyMedia(st.Media, slot) {
		cfg.progress(Progress{Node: c.node, Step: StepMedia, Done: true, Skipped: true})
		return recordOnce(j, StepKey(c.node, StepMedia), map[string]string{"image": url, "slot": slot.Path})
	}
	cfg.progress(Progress{Node: c.node, Step: StepMedia})
	if _, ok := st.CDSlot(); !ok {
		return errors.New("no virtual-media slot takes CD/DVD images")
	}
	for _, m := range st.Media {
		// The CD slot is ejected by bmclib v2.3.5's SetVirtualMedia itself ("eject before insert"),
		// which saves a round of reads; other slots holding stale media are ejected here.
		if m.Inserted && !m.TakesCD() {
			if err := c.eject(ctx, m); err != nil {
				return fmt.Errorf("eject %s (%s): %w", m.ID, m.Image, err)
			}
		}
	}
	err := retry(ctx, c.cfg, func() error {
		_, err := c.bc.SetVirtualMedia(ctx, "CD", url)
		err = fromBMCLib("insert media", err)
		var re *RedfishError
		if errors.As(err, &re) && re.Has(MsgMediaInUse) {
			// VRM0021 (iDRAC9 3.x–7.x): the slot is still attached from an earlier session even
			// though it read back as ejected. Eject again and let retry insert once more.
			_, _ = c.bc.SetVirtualMedia(ctx, "CD", "")
			return &RedfishError{Method: re.Method, Path: re.Path, Status: 503, MessageIDs: re.MessageIDs, Message: re.Message}
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("insert %s: %w", url, err)
	}
	media, err := c.readMedia(ctx, st.mediaPath)
	if err != nil {
		return err
	}
	st.Media = media
	slot, _ := st.CDSlot()
	if !slot.Inserted || slot.Image != url {
		return fmt.Errorf("read-back: slot %s shows Inserted=%t Image=%q after insert", slot.ID, slot.Inserted, slot.Image)
	}
	cfg.progress(Progress{Node: c.node, Step: StepMedia, Done: true})
	return j.Record(StepKey(c.node, StepMedia), map[string]string{"image": url, "slot": slot.Path})
}

func onlyMedia(all []Media, keep Media) bool {
	for _, m := range all {
		if m.Inserted && m.Path != keep.Path {
			return false
		}
	}
	return true
}

// eject removes media from one slot through bmclib; "already detached" counts as success.
func (c *Client) eject(ctx context.Context, m Media) error {
	kind := "USBStick"
	if m.TakesCD() {
		kind = "CD"
	}
	err := retry(ctx, c.cfg, func() error {
		_, err := c.bc.SetVirtualMedia(ctx, kind, "")
		return fromBMCLib("eject media", err)
	})
	var re *RedfishError
	if errors.As(err, &re) && re.Has(MsgMediaInUse) {
		return nil // VRM0021 on eject: "Virtual Media is detached" — already the state we want
	}
	return err
}

// ensureBootOverride arms a one-time UEFI boot from the virtual CD and reads it back.
func (c *Client) ensureBootOverride(ctx context.Context, st *State, method string, j Journal, cfg config) error {
	if bootArmed(*st, method) {
		cfg.progress(Progress{Node: c.node, Step: StepBootOverride, Done: true, Skipped: true})
		return recordOnce(j, StepKey(c.node, StepBootOverride), map[string]string{"method": method})
	}
	cfg.progress(Progress{Node: c.node, Step: StepBootOverride})
	var err error
	if method == MethodSCP {
		err = c.scpBootOnce(ctx, st.managerPath)
	} else {
		err = retry(ctx, c.cfg, func() error {
			_, err := c.bc.SetBootDevice(ctx, "cdrom", false, true)
			return fromBMCLib("set boot override", err)
		})
	}
	if err != nil {
		return err
	}
	if err := c.readBoot(ctx, st, method); err != nil {
		return err
	}
	if !bootArmed(*st, method) {
		return fmt.Errorf("read-back: boot override is %s/%s/%s after setting Cd/Once/UEFI", st.Boot.Target, st.Boot.Enabled, st.Boot.Mode)
	}
	cfg.progress(Progress{Node: c.node, Step: StepBootOverride, Done: true})
	return j.Record(StepKey(c.node, StepBootOverride), map[string]string{"method": method})
}

func bootArmed(st State, method string) bool {
	if method == MethodSCP {
		return st.DellBootOnce != nil && st.DellBootOnce.Armed()
	}
	return st.Boot.Target == "Cd" && st.Boot.Enabled == "Once" && st.Boot.Mode == "UEFI"
}

// readBoot refreshes power and boot override (and the Dell attributes for the SCP method).
func (c *Client) readBoot(ctx context.Context, st *State, method string) error {
	var sys system
	if err := retry(ctx, c.cfg, func() error { return c.raw.get(ctx, st.systemPath, &sys) }); err != nil {
		return err
	}
	st.Power = sys.PowerState
	st.Boot = BootOverride{Target: sys.Boot.Target, Enabled: sys.Boot.Enabled, Mode: sys.Boot.Mode, Allowed: sys.Boot.Allowed}
	if method == MethodSCP {
		b, err := c.dellBootOnce(ctx, st.managerPath)
		if err != nil {
			return err
		}
		st.DellBootOnce = &b
	}
	return nil
}

// power sends On (from Off) or ForceRestart through bmclib.
func (c *Client) power(ctx context.Context, action string) error {
	state := "cycle" // bmclib: ForceRestart
	if action == "On" {
		state = "on"
	}
	// Retried only when the BMC answered with an error (it did not apply the action); a timeout
	// or a reset connection may have been applied, so it is not retried: the caller journals the
	// intent first, and a resumed run reads back before acting again.
	return retry(ctx, c.cfg, func() error {
		_, err := c.bc.SetPowerState(ctx, state)
		err = fromBMCLib("power "+action, err)
		var re *RedfishError
		if err == nil || errors.As(err, &re) {
			return err
		}
		return permanent{err}
	})
}

// permanent hides an error's Temporary method from retry.
type permanent struct{ error }

func (p permanent) Unwrap() error { return p.error }

func (p permanent) Temporary() bool { return false }

// watchPowerTookEffect decides, by read-back for up to the resume grace, whether a power action
// whose intent was journaled reached the BMC: power moved from Off, or the one-time boot that
// was armed (its step journaled before the intent) has been consumed by a boot.
func (c *Client) watchPowerTookEffect(ctx context.Context, st State, pr powerRecord, method string, armedBefore bool) (bool, error) {
	deadline := time.Now().Add(c.cfg.resumeGrace)
	for {
		if pr.From == "Off" && st.Power != "Off" {
			return true, nil
		}
		if armedBefore && !bootArmed(st, method) {
			return true, nil // the one-time boot was consumed by a boot
		}
		if !armedBefore || time.Now().After(deadline) {
			return false, nil
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(c.cfg.poll):
		}
		if err := c.readBoot(ctx, &st, method); err != nil {
			return false, err
		}
	}
}

// waitBooted polls until the system is On and the one-time boot consumed, then checks the ISO
// is still inserted.
func (c *Client) waitBooted(ctx context.Context, st *State, url, method string) error {
	if err := c.readBoot(ctx, st, method); err != nil {
		return err
	}
	deadline := time.Now().Add(c.cfg.confirmTimeout)
	for st.Power != "On" || bootArmed(*st, method) {
		if time.Now().After(deadline) {
			return fmt.Errorf("after %s: power %s, boot override %s/%s still pending", c.cfg.confirmTimeout, st.Power, st.Boot.Target, st.Boot.Enabled)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(c.cfg.poll):
		}
		if err := c.readBoot(ctx, st, method); err != nil {
			return err
		}
	}
	media, err := c.readMedia(ctx, st.mediaPath)
	if err != nil {
		return err
	}
	st.Media = media
	if slot, _ := st.CDSlot(); !slot.Inserted || slot.Image != url {
		return fmt.Errorf("the node booted but the virtual CD shows Inserted=%t Image=%q", slot.Inserted, slot.Image)
	}
	return nil
}

// ErrNoISORead is the confirmation failure when the BMC shows the boot done but the node never
// read its ISO: the one-time boot was ignored and the server started from its disk.
var ErrNoISORead = errors.New("the node did not read its ISO after the power action")

// waitEvidence polls the boot evidence until it holds or the confirm timeout passes.
func (c *Client) waitEvidence(ctx context.Context, url string, since time.Time) error {
	deadline := time.Now().Add(c.cfg.confirmTimeout)
	for {
		err := c.cfg.evidence(ctx, c.node, url, since)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w (%v): the one-time boot was probably ignored and the disk booted", ErrNoISORead, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(c.cfg.poll):
		}
	}
}

// recordOnce records a step found done by read-back unless the journal already holds it with the
// same data (a resumed run after a crash between this step and the power step): every step is
// journaled once per attempt. Fields the journal adds to the record (a caller's stamps) are
// ignored.
func recordOnce(j Journal, key string, data map[string]string) error {
	var prev map[string]any
	if j.Done(key, &prev) {
		same := true
		for k, v := range data {
			same = same && prev[k] == v
		}
		if same {
			return nil
		}
	}
	return j.Record(key, data)
}
