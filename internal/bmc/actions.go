package bmc

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/poll"
)

// MaxMediaURL is the longest image URL iDRAC9 accepts in VirtualMedia.InsertMedia: it refuses
// an Image over 255 characters (ActionParameterValueFormatError). The ISO server (agentiso.URL)
// and preflight use the same limit.
const MaxMediaURL = 255

// ensureMedia leaves the ISO inserted in a CD slot and nothing in any other slot: stale media
// are ejected (media another party left is journaled first, named with its URL redacted) and
// each ejected slot read back, the ISO inserted (the slot's action or PATCH, whichever the BMC
// offers; a CD slot that refuses it is passed over for the next) and the slot read back.
func (c *Client) ensureMedia(ctx context.Context, st *State, url string, j Journal, cfg config) error {
	slots := cdSlots(st.Media, url)
	if len(slots) > 0 && slots[0].Inserted && slots[0].Image == url && onlyMedia(st.Media, slots[0]) {
		cfg.progress(Progress{Node: c.node, Step: StepMedia, Done: true, Skipped: true, ByRead: true})
		return recordOnce(j, StepKey(c.node, StepMedia), map[string]string{"image": url, "slot": slots[0].Path})
	}
	cfg.progress(Progress{Node: c.node, Step: StepMedia})
	if len(slots) == 0 {
		if slot, ok := st.CDSlot(); ok {
			return &Error{Node: c.node, Op: StepMedia, Err: fmt.Errorf("slot %s has no InsertMedia action and does not take PATCH (Allow: %s)", slot.Path, strings.Join(slot.Allow, ", ")),
				remedy: "this BMC offers no way to insert virtual media over Redfish: check its virtual-media license and settings (" + controllerOf(st) + "'s web UI), or update its firmware"}
		}
		return errors.New("no virtual-media slot takes CD/DVD images")
	}
	for _, m := range st.Media {
		if !m.Inserted || (m.Path == slots[0].Path && m.Image == url) {
			continue
		}
		if m.Image != url {
			// Not ours: say what it was before it goes (another party's install, a support session).
			rec := map[string]string{"slot": m.Path, "image": redactURL(m.Image), "why": "another party's media, ejected before inserting the ISO"}
			if err := j.Record(StepKey(c.node, "ejected-"+m.ID), rec); err != nil {
				return err
			}
			cfg.progress(Progress{Node: c.node, Step: StepMedia, Message: "ejecting " + rec["image"] + " from slot " + m.ID + " (inserted by another party)"})
		}
		if err := c.ejectChecked(ctx, st, m); err != nil {
			return err
		}
	}
	var passed []string
	for i, slot := range cdSlots(st.Media, url) {
		if !(slot.Inserted && slot.Image == url) {
			if err := st.vendor.insertMedia(ctx, c, slot, url); err != nil {
				var re *RedfishError
				if i+1 < len(slots) && !(errors.As(err, &re) && re.Has(MsgMediaUnreachable)) && !errors.Is(err, ErrUnreachable) {
					passed = append(passed, slot.ID+": "+err.Error())
					cfg.progress(Progress{Node: c.node, Step: StepMedia, Message: "slot " + slot.ID + " refused the ISO (" + err.Error() + "); trying the next CD slot"})
					continue
				}
				return fmt.Errorf("insert %s into slot %s: %w", url, slot.Path, err)
			}
		}
		got, err := c.settle(ctx, st, slot.Path, func(m Media) bool { return m.Inserted && m.Image == url })
		if err != nil {
			return err
		}
		if !got.Inserted || got.Image != url {
			return &Error{Node: c.node, Op: StepMedia,
				Err:    fmt.Errorf("%w: slot %s shows Inserted=%t Image=%q %s after inserting %s (read back)", ErrMediaStuck, slot.Path, got.Inserted, got.Image, min(mediaSettle, c.cfg.confirmTimeout), url),
				remedy: "the BMC accepted the insert but the slot did not take the image: check " + controllerOf(st) + "'s virtual-media settings (attach mode, license), then replay: bootstrap replay boot --node " + c.node}
		}
		cfg.progress(Progress{Node: c.node, Step: StepMedia, Done: true})
		rec := map[string]string{"image": url, "slot": slot.Path}
		if len(passed) > 0 {
			rec["passedOver"] = strings.Join(passed, "; ")
		}
		return j.Record(StepKey(c.node, StepMedia), rec)
	}
	return errors.New("no CD slot took the ISO")
}

func onlyMedia(all []Media, keep Media) bool {
	for _, m := range all {
		if m.Inserted && m.Path != keep.Path {
			return false
		}
	}
	return true
}

// overrideRecord is the journaled boot-override step.
type overrideRecord struct {
	Method string `json:"method"`
	// Reason says why a persistent override was used instead of a one-time boot.
	Reason string `json:"reason,omitempty"`
	// Again says why the node was armed again in the same attempt.
	Again string `json:"again,omitempty"`
}

// ensureBootOverride arms the boot from the virtual CD and reads it back. The standard way is a
// one-time UEFI override (Cd/Once); a BMC that does not offer Once, or that reads back Continuous
// after being told Once (sushy-tools, some OpenBMC builds), gets a persistent Cd override instead,
// as Ironic does: *method becomes MethodContinuous and the install stage takes the override off
// once the node has written its disk (TakeOverrideOff).
//
// again, when set, says why a node booted in this attempt is armed again (journaled with it).
func (c *Client) ensureBootOverride(ctx context.Context, st *State, method *string, again string, j Journal, cfg config) error {
	if bootArmed(*st, *method) {
		cfg.progress(Progress{Node: c.node, Step: StepBootOverride, Done: true, Skipped: true, ByRead: true})
		return recordOnce(j, StepKey(c.node, StepBootOverride), map[string]string{"method": *method})
	}
	cfg.progress(Progress{Node: c.node, Step: StepBootOverride})
	rec := overrideRecord{Method: *method}
	var err error
	switch *method {
	case MethodStandard, MethodContinuous:
		if !st.Boot.OnceOffered() {
			rec.Method = MethodContinuous
			rec.Reason = "the BMC does not offer Once (BootSourceOverrideEnabled allows " + strings.Join(st.Boot.EnabledAllowed, ", ") + ")"
		}
		err = retry(ctx, c.cfg, func() error { return c.setBootCd(ctx, rec.Method == MethodContinuous) })
	default:
		err = st.vendor.armOEM(ctx, c, st, *method)
	}
	if err != nil {
		return err
	}
	if err := c.readBoot(ctx, st, rec.Method); err != nil {
		return err
	}
	if rec.Method == MethodStandard && st.Boot.Target == "Cd" && st.Boot.Enabled == "Continuous" {
		rec.Method = MethodContinuous
		rec.Reason = "the BMC reads back Continuous after being told Once"
	}
	if !bootArmed(*st, rec.Method) {
		return fmt.Errorf("read-back: boot override is %s/%s/%s after setting Cd/%s/UEFI", st.Boot.Target, st.Boot.Enabled, st.Boot.Mode, enabledOf(rec.Method))
	}
	if again != "" {
		rec.Again = again
	}
	*method = rec.Method
	cfg.progress(Progress{Node: c.node, Step: StepBootOverride, Done: true, Message: rec.Reason})
	return j.Record(StepKey(c.node, StepBootOverride), rec)
}

func enabledOf(method string) string {
	if method == MethodContinuous {
		return "Continuous"
	}
	return "Once"
}

func bootArmed(st State, method string) bool {
	switch method {
	case MethodSCP:
		return st.DellBootOnce != nil && st.DellBootOnce.Armed()
	case MethodContinuous:
		return st.Boot.Target == "Cd" && st.Boot.Enabled == "Continuous" && (st.Boot.Mode == "" || st.Boot.Mode == "UEFI")
	}
	return st.Boot.Target == "Cd" && st.Boot.Enabled == "Once" && (st.Boot.Mode == "" || st.Boot.Mode == "UEFI")
}

// readBoot refreshes power and boot override (and the Dell attributes for the SCP method).
func (c *Client) readBoot(ctx context.Context, st *State, method string) error {
	var sys system
	if err := retry(ctx, c.cfg, func() error { return c.raw.get(ctx, st.systemPath, &sys) }); err != nil {
		return err
	}
	st.Power = sys.PowerState
	st.Boot = sys.override()
	st.lastReset, st.progressAt = sys.LastResetTime, sys.BootProgress.LastStateTime
	if method == MethodSCP {
		return st.vendor.readOEM(ctx, c, st)
	}
	return nil
}

// power sends On (from Off) or ForceRestart to the connection's system (see reset).
func (c *Client) power(ctx context.Context, action string) error {
	// Retried only when the BMC answered with an error (it did not apply the action); a timeout
	// or a reset connection may have been applied, so it is not retried: the caller journals the
	// intent first, and a resumed run reads back before acting again.
	return retry(ctx, c.cfg, func() error {
		err := c.reset(ctx, action)
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
func (c *Client) watchPowerTookEffect(ctx context.Context, st State, pr powerRecord, method, url string, armedBefore bool) (bool, error) {
	took, first := false, true
	err := poll.Until(ctx, c.every(c.cfg.resumeGrace), func(ctx context.Context) (bool, error) {
		if !first {
			if err := c.readBoot(ctx, &st, method); err != nil {
				return false, err
			}
		}
		first = false
		switch {
		case pr.From == "Off" && st.Power != "Off":
			took = true
		case armedBefore && method != MethodContinuous && !bootArmed(st, method):
			took = true // the one-time boot was consumed by a boot
		case c.cfg.evidence != nil && c.cfg.evidence(ctx, c.node, url, pr.At) == nil:
			took = true // the node read its ISO after the intent: the action reached it
		}
		// Nothing armed and no evidence to wait for: the BMC's state is all there is.
		return took || (!armedBefore && c.cfg.evidence == nil), nil
	})
	if errors.Is(err, poll.ErrTimeout) {
		return false, nil
	}
	return took, err
}

// waitBooted polls until the system is On and the one-time boot consumed, then checks the ISO
// is still inserted. A persistent override is never consumed: the BMC shows only the power, and
// the boot evidence (WithBootEvidence), when given, is the witness. Where the BMC reports
// LastResetTime or BootProgress it also waits for one of the evidence rules' signs (R1–R4) to
// show; a timeout without any is ErrNoReset. It returns what it observed for judge.
func (c *Client) waitBooted(ctx context.Context, st *State, url, method string, pr powerRecord) (observation, error) {
	o := observation{From: pr.From, Action: pr.Action, ResetBefore: pr.LastReset, ProgressBefore: pr.Progress,
		Once: method != MethodContinuous}
	seen := func() bool {
		o.PowerAfter, o.ResetAfter, o.ProgressAfter = st.Power, st.lastReset, st.progressAt
		o.Consumed = o.Once && !bootArmed(*st, method)
		return len(judge(observation{From: o.From, Action: o.Action, PowerAfter: o.PowerAfter, ResetBefore: o.ResetBefore,
			ResetAfter: o.ResetAfter, ProgressBefore: o.ProgressBefore, ProgressAfter: o.ProgressAfter, Once: o.Once, Consumed: o.Consumed, FetchLog: true}).Evidence) > 0
	}
	up := false
	err := poll.Until(ctx, c.every(c.cfg.confirmTimeout), func(ctx context.Context) (bool, error) {
		if err := c.readBoot(ctx, st, method); err != nil {
			return false, err
		}
		sign := seen()
		up = st.Power == "On" && (method == MethodContinuous || !bootArmed(*st, method))
		// Marks the BMC reports but that have not moved yet: wait for them (or the timeout).
		marks := st.lastReset != "" || st.progressAt != ""
		return up && (sign || !marks), nil
	})
	if errors.Is(err, poll.ErrTimeout) {
		if !seen() && (st.lastReset != "" || st.progressAt != "" || (o.Once && !o.Consumed)) {
			return o, &Error{Node: c.node, Op: StepConfirm, remedy: noResetRemedy(st, c.node),
				Err: fmt.Errorf("%w: after %s power %s (was %s), LastResetTime %q, boot override %s/%s", ErrNoReset, c.cfg.confirmTimeout, st.Power, pr.From, st.lastReset, st.Boot.Target, st.Boot.Enabled)}
		}
		return o, fmt.Errorf("after %s: power %s, boot override %s/%s still pending", c.cfg.confirmTimeout, st.Power, st.Boot.Target, st.Boot.Enabled)
	}
	if err != nil {
		return o, err
	}
	media, err := c.readMedia(ctx, st.mediaPath)
	if err != nil {
		return o, err
	}
	st.Media = media
	if !holds(st.Media, url) {
		slot, _ := st.CDSlot()
		return o, fmt.Errorf("the node booted but the virtual CD shows Inserted=%t Image=%q", slot.Inserted, slot.Image)
	}
	return o, nil
}

// readISOSince decides, for a node whose power action an earlier process sent, whether the node
// read its ISO after it. It waits (up to the resume grace) while the BMC shows the boot still
// pending — the node is in POST and will read the ISO now that it is served again — and for a
// read once the boot is consumed; it reports false when the boot came and went without one.
func (c *Client) readISOSince(ctx context.Context, st *State, url, method string, since time.Time) (bool, error) {
	read, pending := false, false
	err := poll.Until(ctx, c.every(c.cfg.resumeGrace), func(ctx context.Context) (bool, error) {
		if c.cfg.evidence(ctx, c.node, url, since) == nil {
			read = true
			return true, nil
		}
		if err := c.readBoot(ctx, st, method); err != nil {
			return false, err
		}
		pending = st.Power != "On" || (method != MethodContinuous && bootArmed(*st, method))
		return false, nil
	})
	if errors.Is(err, poll.ErrTimeout) {
		// Still pending after the grace: leave it to the confirm step's longer wait.
		return pending, nil
	}
	return read, err
}

// ErrNoISORead is the confirmation failure when the BMC shows the boot done but the node never
// read its ISO: the one-time boot was ignored and the server started from its disk.
var ErrNoISORead = errors.New("the node did not read its ISO after the power action")

// waitEvidence polls the boot evidence until it holds or the confirm timeout passes.
func (c *Client) waitEvidence(ctx context.Context, url string, since time.Time) error {
	var last error
	err := poll.Until(ctx, c.every(c.cfg.confirmTimeout), func(ctx context.Context) (bool, error) {
		last = c.cfg.evidence(ctx, c.node, url, since)
		return last == nil, nil
	})
	if errors.Is(err, poll.ErrTimeout) {
		return fmt.Errorf("%w (%v): the one-time boot was probably ignored and the disk booted", ErrNoISORead, last)
	}
	return err
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
