package stages

import (
	"context"
	"errors"
	"sync"

	"github.com/bootstrap-dev/bootstrap/internal/bmc"
	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
)

// Reruns check the present. A run that resumes with the boot journaled but install not finished
// (the stage runs again because its Verify found a node changed, or a new attempt keeps the
// nodes whose inputs did not change) reads each node's BMC before it carries the node's earlier
// records: a node found powered off, or with its ISO gone from the virtual CD, is booted again —
// once, in this attempt, with the reason journaled as "node:<node>/recheck" — instead of being
// carried as booted while install waits for a host that never comes. A node whose BMC cannot be
// read is carried as before, with a warning. After install has succeeded, and on a replay
// (which forces its nodes anyway), nothing is rechecked: an installed node is never booted into
// the ISO again by a rerun.
func (b Boot) recheck(ctx context.Context, env *pipeline.Env, targets []bmc.Target, urlFor func(string) string) func([]string) map[string]string {
	return func(nodes []string) map[string]string {
		if env.Replay || stageSucceeded(env, NameInstall) {
			return nil
		}
		persistent := map[string]bool{}
		if raw := stageOutput(env, NameBoot); len(raw) > 0 {
			if own, err := BootOutputKey.Decode(raw); err == nil {
				for _, n := range own.Nodes {
					persistent[n.Node] = n.Persistent
				}
			}
		}
		byName := map[string]bmc.Target{}
		for _, t := range targets {
			byName[t.Node] = t
		}
		opts := append(profileBootOptions(env), bmc.WithHandedOver(func(n string) bool { return persistent[n] }))
		opts = append(opts, b.Options...)
		var mu sync.Mutex
		stale := map[string]string{}
		var wg sync.WaitGroup
		for _, n := range nodes {
			t, ok := byName[n]
			if !ok {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				err := bmc.VerifyBooted(ctx, t, urlFor(n), opts...)
				var be *bmc.Error
				switch {
				case err == nil:
					return
				case errors.As(err, &be) && (be.Op == bmc.StepPower || be.Op == bmc.StepMedia):
					why := "booted again: an earlier attempt booted it, but its BMC now shows " + be.Err.Error()
					mu.Lock()
					stale[n] = why
					mu.Unlock()
					bootEmit(env, pipeline.Event{Kind: pipeline.Warning, Node: n, Message: "node " + n + ": " + why})
				default:
					bootEmit(env, pipeline.Event{Kind: pipeline.Warning, Node: n, Message: "node " + n +
						": its BMC could not be read to check the earlier boot still holds (" + err.Error() + "); its journaled boot is kept"})
				}
			}()
		}
		wg.Wait()
		return stale
	}
}
