package bmc

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Steps of the per-node boot flow; journal keys are StepKey(node, step).
const (
	StepConnect      = "connect"
	StepInspect      = "inspect"
	StepMedia        = "media"
	StepBootOverride = "boot-override"
	StepPowerIntent  = "power-intent"
	StepPower        = "power"
	StepConfirm      = "booted"
	// StepHandover is the install stage's: the boot override taken off (and the ISO ejected)
	// once a node that needed a persistent override has written its disk.
	StepHandover = "handover"
)

// Journal records finished steps so a resumed run skips them; pipeline.Steps satisfies it.
// Implementations must be safe for concurrent use, and Record must return only once the entry
// is durable.
type Journal interface {
	Done(key string, out any) bool
	Record(key string, data any) error
}

// StepKey is the journal key of a node's step: "node:<node>/<step>", the same shape as
// pipeline.NodeStep, so `bootstrap status` groups the steps by node.
func StepKey(node, step string) string { return "node:" + node + "/" + step }

// Boot-override methods.
const (
	MethodStandard = "redfish" // Boot.BootSourceOverrideTarget=Cd, Enabled=Once, Mode=UEFI
	// MethodContinuous is Cd/Continuous, for BMCs that do not honour Once: the override stays
	// until the install stage takes it off (TakeOverrideOff) once the node has written its disk.
	MethodContinuous = "redfish-continuous"
	MethodSCP        = "dell-scp-boot" // iDRAC ImportSystemConfiguration ServerBoot.1#BootOnce
)

// NodeResult is what happened to one node; it holds no secret and goes to the journal.
type NodeResult struct {
	Node string `json:"node"`
	// System is the Redfish System acted on (its path), SystemName its Name.
	System     string `json:"system,omitempty"`
	SystemName string `json:"systemName,omitempty"`
	Kind       string `json:"kind,omitempty"` // the implementation chosen: Dell iDRAC9, generic Redfish
	Vendor     string `json:"vendor,omitempty"`
	Model      string `json:"model,omitempty"`
	Firmware   string `json:"firmware,omitempty"`
	Layout     Layout `json:"layout,omitempty"`
	Image      string `json:"image"`
	Method     string `json:"method,omitempty"`
	// Persistent is set when the BMC did not honour a one-time boot: the Cd override stays on
	// until the install stage takes it off (the report lists these nodes).
	Persistent  bool   `json:"persistentOverride,omitempty"`
	PowerAction string `json:"powerAction,omitempty"` // On or ForceRestart; empty when an earlier run did it
	BasicAuth   bool   `json:"basicAuth,omitempty"`
	Insecure    bool   `json:"insecure,omitempty"`
	Resumed     bool   `json:"resumed,omitempty"`
	Evidence    string `json:"evidence,omitempty"` // how the boot from the ISO was witnessed
	// Unverified, when set, says why the boot could not be witnessed ("booted, unverified: …";
	// see the evidence rules in evidence.go).
	Unverified string    `json:"unverified,omitempty"`
	Seconds    float64   `json:"seconds"`
	Finished   time.Time `json:"finished"`
	Error      string    `json:"error,omitempty"`
}

type powerRecord struct {
	Action string    `json:"action"`
	At     time.Time `json:"at"`
	From   string    `json:"from"`
	Method string    `json:"method"`
	ByRead bool      `json:"byReadBack,omitempty"`
	// Reason says why a node already powered in this attempt is powered again: it did not read
	// its ISO after the earlier power action (the ISO server died with a killed run).
	Reason string `json:"reason,omitempty"`
	// LastReset and Progress are LastResetTime and BootProgress.LastStateTime read before the
	// action: the baseline of evidence rules R2 and R3, kept for a resumed run.
	LastReset string `json:"lastResetTime,omitempty"`
	Progress  string `json:"bootProgressTime,omitempty"`
}

// BootNode boots one node from the ISO at url: connect, inspect, eject stale media, insert the
// ISO, arm a one-time UEFI boot from the virtual CD, power on or restart, and wait until the BMC
// shows the one-time boot consumed. Each step is verified by read-back and journaled in j; a step
// journaled earlier is verified, not redone, and a node whose power step is journaled is never
// powered again.
func BootNode(ctx context.Context, t Target, url string, j Journal, opts ...Option) (NodeResult, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return NodeResult{Node: t.Node}, err
	}
	return bootNode(ctx, t, url, j, cfg)
}

func bootNode(ctx context.Context, t Target, url string, j Journal, cfg config) (NodeResult, error) {
	start := time.Now()
	res := NodeResult{Node: t.Node, Image: url, Insecure: t.Insecure}
	var done NodeResult
	if j.Done(StepKey(t.Node, StepConfirm), &done) {
		done.Resumed = true
		cfg.progress(Progress{Node: t.Node, Step: StepConfirm, Done: true, Skipped: true})
		return done, nil
	}
	var st State
	fail := func(op string, err error) (NodeResult, error) {
		var be *Error
		if !errors.As(err, &be) {
			be = newError(t.Node, op, err)
			err = be
		}
		reword(&st, be)
		if note := armedNote(j, t.Node, &st); note != "" && !strings.Contains(be.remedy, note) {
			be.remedy = strings.TrimSuffix(be.remedy, ".") + ". " + note
		}
		res.Error = err.Error()
		res.Seconds = time.Since(start).Seconds()
		return res, err
	}
	if len(url) > MaxMediaURL {
		return fail(StepMedia, fmt.Errorf("ISO URL is %d characters; iDRAC9 accepts at most %d", len(url), MaxMediaURL))
	}
	step := func(s string) { cfg.progress(Progress{Node: t.Node, Step: s}) }
	finished := func(s string, skipped bool) {
		cfg.progress(Progress{Node: t.Node, Step: s, Done: true, Skipped: skipped})
	}

	step(StepConnect)
	c, err := Connect(ctx, t, func(c *config) error { *c = cfg; return nil })
	if err != nil {
		return fail(StepConnect, err)
	}
	defer c.Close(ctx)
	res.BasicAuth = c.BasicAuth()
	finished(StepConnect, false)

	step(StepInspect)
	st, err = c.inspect(ctx, false)
	if err != nil {
		return fail(StepInspect, err)
	}
	res.Kind, res.Vendor, res.Model, res.Firmware, res.Layout = st.Kind, st.Vendor, st.Model, st.Firmware, st.Layout
	res.System, res.SystemName = st.System, st.SystemName
	res.Method = st.vendor.bootMethod(st)
	var arming overrideRecord
	if j.Done(StepKey(t.Node, StepBootOverride), &arming) && arming.Method == MethodContinuous {
		res.Method = MethodContinuous // an earlier attempt found Once not honoured
	}
	finished(StepInspect, false)
	if msg := vendorMismatch(t.Vendor, st); msg != "" {
		cfg.progress(Progress{Node: t.Node, Step: StepInspect, Done: true, Message: "warning: " + msg})
	}

	var pr powerRecord
	powered := j.Done(StepKey(t.Node, StepPower), &pr)
	if !powered && j.Done(StepKey(t.Node, StepPowerIntent), &pr) {
		// A crash fell between sending the power action and journaling it: read back before acting.
		res.Resumed = true
		armed := j.Done(StepKey(t.Node, StepBootOverride), nil)
		took, err := c.watchPowerTookEffect(ctx, st, pr, res.Method, url, armed)
		if err != nil {
			return fail(StepPower, err)
		}
		if took {
			pr.ByRead = true
			if err := j.Record(StepKey(t.Node, StepPower), pr); err != nil {
				return fail(StepPower, err)
			}
			powered = true
		}
	}
	if powered && cfg.evidence != nil {
		// A run killed between the power action and the node reading its ISO took the ISO
		// server with it: the node then started from its disk, and the BMC's read-back (power
		// on, one-time boot consumed, media inserted) cannot tell. The fetch log can.
		read, err := c.readISOSince(ctx, &st, url, res.Method, pr.At)
		if err != nil {
			return fail(StepConfirm, err)
		}
		if !read {
			powered = false
			pr.Reason = fmt.Sprintf("the node did not read its ISO after the power action at %s (the ISO server was down: the run that sent it was killed)", pr.At.Format(time.RFC3339))
			cfg.progress(Progress{Node: t.Node, Step: StepPower, Message: "booting again: " + pr.Reason})
		}
	}
	if powered {
		res.Resumed = true
		finished(StepPower, true)
	} else {
		if err := c.ensureMedia(ctx, &st, url, j, cfg); err != nil {
			return fail(StepMedia, err)
		}
		if err := c.ensureBootOverride(ctx, &st, &res.Method, pr.Reason, j, cfg); err != nil {
			return fail(StepBootOverride, err)
		}
		step(StepPower)
		intent := pr // the journaled intent whose action read back as never sent, if any
		pr = powerRecord{Action: "ForceRestart", From: st.Power, Method: res.Method, At: time.Now().UTC(), Reason: intent.Reason,
			LastReset: st.lastReset, Progress: st.progressAt}
		if st.Power == "Off" {
			pr.Action = "On"
		}
		// A journaled intent for the same action stands: the step is journaled once per attempt
		// (a node powered again because it did not read its ISO journals a new one).
		if intent.Action != pr.Action || intent.From != pr.From || intent.Method != pr.Method || pr.Reason != "" {
			if err := j.Record(StepKey(t.Node, StepPowerIntent), pr); err != nil {
				return fail(StepPower, err)
			}
		}
		if err := c.power(ctx, pr.Action); err != nil {
			return fail(StepPower, err)
		}
		if err := j.Record(StepKey(t.Node, StepPower), pr); err != nil {
			return fail(StepPower, err)
		}
		res.PowerAction = pr.Action
		finished(StepPower, false)
	}

	step(StepConfirm)
	obs, err := c.waitBooted(ctx, &st, url, res.Method, pr)
	if err != nil {
		return fail(StepConfirm, err)
	}
	if cfg.evidence != nil {
		if err := c.waitEvidence(ctx, url, pr.At); err != nil {
			return fail(StepConfirm, err)
		}
		obs.FetchLog, obs.ISORead = true, true
	}
	v := judge(obs)
	if v.NoReset {
		return fail(StepConfirm, &Error{Node: t.Node, Op: StepConfirm, remedy: noResetRemedy(&st, t.Node),
			Err: fmt.Errorf("%w: power %s throughout, LastResetTime %q unchanged", ErrNoReset, st.Power, st.lastReset)})
	}
	res.Evidence, res.Unverified = strings.Join(v.Evidence, "; "), v.Unverified
	res.Persistent = res.Method == MethodContinuous
	res.Seconds = time.Since(start).Seconds()
	res.Finished = time.Now().UTC()
	if err := j.Record(StepKey(t.Node, StepConfirm), res); err != nil {
		return fail(StepConfirm, err)
	}
	if res.Unverified != "" {
		cfg.progress(Progress{Node: t.Node, Step: StepConfirm, Done: true, Message: UnverifiedPrefix + res.Unverified})
	} else {
		cfg.progress(Progress{Node: t.Node, Step: StepConfirm, Done: true, Message: "booted: " + res.Evidence})
	}
	return res, nil
}

// UnverifiedPrefix starts the progress message of a node booted without evidence.
const UnverifiedPrefix = "booted, unverified: "

// armedNote says, after a failure, what this node's BMC was left with by the steps journaled so
// far (the ISO inserted, the boot override set) and what the engineer does about it: the server
// would boot the ISO at its next power cycle, so the note names the replay that finishes the job
// and how to disarm it by hand instead. "" when nothing was set.
func armedNote(j Journal, node string, st *State) string {
	var media map[string]string
	var arming overrideRecord
	hasMedia := j.Done(StepKey(node, StepMedia), &media)
	hasOverride := j.Done(StepKey(node, StepBootOverride), &arming)
	if !hasMedia && !hasOverride {
		return ""
	}
	var left []string
	if hasMedia {
		left = append(left, "the ISO inserted in slot "+media["slot"])
	}
	if hasOverride {
		left = append(left, "a boot override to the virtual CD ("+arming.Method+")")
	}
	return "The server is left armed: " + strings.Join(left, " and ") + ", so its next power cycle boots the ISO. " +
		"Finish the boot with: bootstrap replay boot --node " + node + " (or, to leave the server as it was, eject the virtual media and set the boot override to None in " + controllerOf(st) + "'s web UI)"
}
