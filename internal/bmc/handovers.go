package bmc

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// The install follows every node, so it hands over to their disks the nodes whose BMC did not
// honour a one-time boot: those were booted with a persistent Cd override (NodeResult.Persistent)
// and would boot the ISO again on every reboot. As soon as a node reports it is writing its disk,
// its override is taken off (TakeOverrideOff: None, or Hdd); once it runs from its disk (or the
// install has succeeded) its ISO is ejected too. Each is read back and journaled
// (node:<node>/override-off, node:<node>/handover), so a resumed install finishes what a killed
// one started and never repeats what is done. The install stage adapter feeds Handovers the host
// stages the rendezvous host reports.

// StepOverrideOff is the per-node step of a persistent override taken off (the ISO still in).
const StepOverrideOff = "override-off"

// diskWritten are the assisted-installer host stages from which the node's disk holds (or is
// being written with) the installed system: its next boot must come from the disk.
var diskWritten = map[string]bool{"Writing image to disk": true, "Rebooting": true, "Waiting for ignition": true,
	"Configuring": true, "Joined": true, "Done": true}

// onDisk are the stages at which the node runs from its disk: the ISO is no longer read.
var onDisk = map[string]bool{"Waiting for ignition": true, "Configuring": true, "Joined": true, "Done": true}

// Handovers hands over the nodes booted with a persistent override, each once.
type Handovers struct {
	journal Journal
	opts    []Option
	notify  func(node, msg string, warning bool)
	targets map[string]Target
	urls    map[string]string
	order   []string
}

// NewHandovers returns an empty set journaling to j; notify (optional) hears each handover
// (warning set for a failed attempt that Finish retries).
func NewHandovers(j Journal, notify func(node, msg string, warning bool), opts ...Option) *Handovers {
	return &Handovers{journal: j, opts: opts, notify: notify, targets: map[string]Target{}, urls: map[string]string{}}
}

// Add makes t's node one to hand over; isoURL is the ISO it was booted from (the media to eject).
func (h *Handovers) Add(t Target, isoURL string) {
	if _, ok := h.targets[t.Node]; !ok {
		h.order = append(h.order, t.Node)
	}
	h.targets[t.Node], h.urls[t.Node] = t, isoURL
}

// Nodes lists the nodes to hand over, in the order added.
func (h *Handovers) Nodes() []string { return append([]string(nil), h.order...) }

// OnHostStage reacts to a host's install stage: the override comes off once the disk is being
// written, the ISO out once the node runs from its disk. A failure here is a warning: Finish
// tries again and fails if it still cannot.
func (h *Handovers) OnHostStage(ctx context.Context, host, stage string) {
	node := h.node(host)
	if node == "" || !diskWritten[stage] {
		return
	}
	if err := h.take(ctx, node, onDisk[stage], "host stage "+stage); err != nil {
		h.say(node, err.Error(), true)
	}
}

// Finish hands over every node still carrying its override or ISO (the install succeeded, so
// every node runs from its disk).
func (h *Handovers) Finish(ctx context.Context) error {
	var errs []error
	for _, n := range h.order {
		errs = append(errs, h.take(ctx, n, true, "install finished"))
	}
	return errors.Join(errs...)
}

// take takes node's override off (and with eject its ISO out), unless journaled already.
func (h *Handovers) take(ctx context.Context, node string, eject bool, why string) error {
	key := StepOverrideOff
	if eject {
		key = StepHandover
	}
	if h.journal.Done(StepKey(node, StepHandover), nil) || h.journal.Done(StepKey(node, key), nil) {
		return nil
	}
	res, err := TakeOverrideOff(ctx, h.targets[node], h.urls[node], eject, h.opts...)
	if err != nil {
		return fmt.Errorf("node %s: take the persistent boot override off: %w", node, err)
	}
	rec := struct {
		Handover
		Why string `json:"why"`
	}{res, why}
	if err := h.journal.Record(StepKey(node, key), rec); err != nil {
		return err
	}
	msg := fmt.Sprintf("node %s (%s): boot override now %s", node, why, res.Override)
	if len(res.Ejected) > 0 {
		msg += ", ISO ejected from " + strings.Join(res.Ejected, ", ")
	}
	if res.Already {
		msg += " (already so; verified by read-back)"
	}
	h.say(node, msg, false)
	return nil
}

// node maps an install host name to the profile's node ("master-0" or "master-0.example.com").
func (h *Handovers) node(host string) string {
	if _, ok := h.targets[host]; ok {
		return host
	}
	if short, _, ok := strings.Cut(host, "."); ok {
		if _, ok := h.targets[short]; ok {
			return short
		}
	}
	return ""
}

func (h *Handovers) say(node, msg string, warning bool) {
	if h.notify != nil {
		h.notify(node, msg, warning)
	}
}
