package stages

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/bmc"
	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
)

// The install stage follows every node, so it owns handing over to their disks the nodes whose
// BMC did not honour a one-time boot: those were booted with a persistent Cd override
// (bmc.NodeResult.Persistent) and would boot the ISO again on every reboot. As soon as a node
// reports it is writing its disk, its override is taken off (bmc.TakeOverrideOff: None, or Hdd);
// once it runs from its disk (or the install has succeeded) its ISO is ejected too. Each is read
// back and journaled (node:<node>/override-off, node:<node>/handover), so a resumed install
// finishes what a killed one started and never repeats what is done.

// Step keys of the handover (per node, journaled by the install stage).
const (
	stepOverrideOff = "override-off"
	stepHandover    = bmc.StepHandover
)

// diskWritten are the assisted-installer host stages from which the node's disk holds (or is
// being written with) the installed system: its next boot must come from the disk.
var diskWritten = map[string]bool{"Writing image to disk": true, "Rebooting": true, "Waiting for ignition": true,
	"Configuring": true, "Joined": true, "Done": true}

// onDisk are the stages at which the node runs from its disk: the ISO is no longer read.
var onDisk = map[string]bool{"Waiting for ignition": true, "Configuring": true, "Joined": true, "Done": true}

// handover is the install stage's cleanup of persistent overrides.
type handover struct {
	env     *pipeline.Env
	opts    []bmc.Option
	targets map[string]bmc.Target
	urls    map[string]string
	order   []string
}

// newHandover finds the nodes the boot stage left with a persistent override.
func newHandover(env *pipeline.Env, opts []bmc.Option) (*handover, error) {
	h := &handover{env: env, opts: opts, targets: map[string]bmc.Target{}, urls: map[string]string{}}
	boot, ok, err := BootOutputKey.Read(env)
	if err != nil || !ok {
		return h, err
	}
	persistent := map[string]string{}
	for _, n := range boot.Nodes {
		if n.Persistent {
			persistent[n.Node] = n.Image
		}
	}
	if len(persistent) == 0 {
		return h, nil
	}
	targets, _ := bootTargets(&pipeline.Env{Site: env.Site})
	for _, t := range targets {
		if url, ok := persistent[t.Node]; ok {
			h.targets[t.Node], h.urls[t.Node] = t, url
			h.order = append(h.order, t.Node)
		}
	}
	return h, nil
}

// onStage reacts to a host's install stage: the override comes off once the disk is being
// written, the ISO out once the node runs from its disk. A failure here is a warning: finish
// tries again and fails the stage if it still cannot.
func (h *handover) onStage(ctx context.Context, host, stage string) {
	node := h.node(host)
	if node == "" || !diskWritten[stage] {
		return
	}
	if err := h.take(ctx, node, onDisk[stage], "host stage "+stage); err != nil {
		h.emit(pipeline.Warning, node, err.Error())
	}
}

// finish hands over every node still carrying its override or ISO (the install succeeded, so
// every node runs from its disk).
func (h *handover) finish(ctx context.Context) error {
	var errs []error
	for _, n := range h.order {
		errs = append(errs, h.take(ctx, n, true, "install finished"))
	}
	return errors.Join(errs...)
}

// take takes node's override off (and with eject its ISO out), unless journaled already.
func (h *handover) take(ctx context.Context, node string, eject bool, why string) error {
	key := stepOverrideOff
	if eject {
		key = stepHandover
	}
	if h.env.Steps.Done(bmc.StepKey(node, stepHandover), nil) || h.env.Steps.Done(bmc.StepKey(node, key), nil) {
		return nil
	}
	res, err := bmc.TakeOverrideOff(ctx, h.targets[node], h.urls[node], eject, h.opts...)
	if err != nil {
		return fmt.Errorf("node %s: take the persistent boot override off: %w", node, err)
	}
	rec := struct {
		bmc.Handover
		Why string `json:"why"`
	}{res, why}
	if err := h.env.Steps.Record(bmc.StepKey(node, key), rec); err != nil {
		return err
	}
	msg := fmt.Sprintf("node %s (%s): boot override now %s", node, why, res.Override)
	if len(res.Ejected) > 0 {
		msg += ", ISO ejected from " + strings.Join(res.Ejected, ", ")
	}
	if res.Already {
		msg += " (already so; verified by read-back)"
	}
	h.emit(pipeline.Info, node, msg)
	return nil
}

// node maps an install host name to the profile's node ("master-0" or "master-0.example.com").
func (h *handover) node(host string) string {
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

func (h *handover) emit(kind pipeline.EventKind, node, msg string) {
	if h.env.Events != nil {
		h.env.Events(pipeline.Event{Time: time.Now(), Kind: kind, Stage: NameInstall, Node: node, Step: stepHandover, Message: msg})
	}
}
