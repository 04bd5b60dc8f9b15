package stages

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/cluster"
	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
	"github.com/bootstrap-dev/bootstrap/internal/upgrade"
)

// UpgradeHop is one hop of an upgrade plan as a stage of the upgrade's own runner (its journal
// is the work dir's upgrade/journal.jsonl): `bootstrap upgrade run` makes one per hop, named
// hop-<version>, so --from/--until select hops and a killed or tripped hop resumes from its
// journaled steps.
type UpgradeHop struct {
	Client *cluster.Client
	// Options are the hop's run options; their Hop is the stage's input.
	Options upgrade.RunOptions
	// Settings are the options a flag, the site profile or a default gave, with their sources:
	// journaled as the hop's settings step before its first step (upgrade.RecordSettings).
	Settings []upgrade.Setting
}

// HopStageName is the stage name of the hop to version.
func HopStageName(to string) string { return "hop-" + to }

// Name implements pipeline.Stage.
func (h *UpgradeHop) Name() string { return HopStageName(h.Options.Hop.To) }

// Summary implements pipeline.Stage.
func (h *UpgradeHop) Summary() string {
	return fmt.Sprintf("update %s -> %s, canary first", h.Options.Hop.From, h.Options.Hop.To)
}

// Inputs implements pipeline.Stage: the hop (versions and payload digest) and the canary.
func (h *UpgradeHop) Inputs(*pipeline.Env) (any, error) {
	return map[string]string{"from": h.Options.Hop.From, "to": h.Options.Hop.To, "payload": h.Options.Hop.Payload,
		"canary": h.Options.Canary, "canaryPool": h.Options.CanaryPool}, nil
}

// Run implements pipeline.Stage; a trip (*upgrade.Trip) and a failed preflight carry their remedy
// into the journal.
func (h *UpgradeHop) Run(ctx context.Context, env *pipeline.Env) (any, error) {
	o := h.Options
	if err := upgrade.RecordSettings(env.Steps, o.Hop.To, h.Settings); err != nil {
		return nil, err
	}
	if o.Progress == nil {
		o.Progress = func(msg string) {
			env.Events(pipeline.Event{Kind: pipeline.Info, Stage: h.Name(), Message: msg})
		}
	}
	res, err := upgrade.Run(ctx, h.Client, env.Steps, o)
	var trip *upgrade.Trip
	if errors.As(err, &trip) { // read-only, and written even when the run was interrupted
		dir := filepath.Join(env.WorkDir, "gather", h.Name()+"-"+time.Now().UTC().Format("20060102T150405Z"))
		if g, gerr := upgrade.GatherTrip(context.WithoutCancel(ctx), h.Client, dir, trip); gerr == nil {
			trip.Gathered = g
		}
	}
	if err != nil {
		return nil, err
	}
	return res, nil
}
