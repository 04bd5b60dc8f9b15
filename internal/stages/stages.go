package stages

import (
	"context"
	"fmt"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/isoserver"
	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
	"github.com/bootstrap-dev/bootstrap/internal/preflight"
)

// All returns the pipeline's stages in their fixed order, with an ISO server of their own (for
// listing the stages; a command that runs them uses WithISOServer and owns the server).
func All() []pipeline.Stage { return WithISOServer(&isoserver.Server{}) }

// WithISOServer returns the pipeline's stages in their fixed order, sharing iso: the boot stage
// and the install stage (nodes read their live ISO until they have written their disks) each
// make sure it serves, so a run resumed in install serves the ISO too; the boot stage takes its
// fetch log as the evidence that a node read its ISO after its power action. The caller owns
// iso and closes it when the process ends.
func WithISOServer(iso *isoserver.Server) []pipeline.Stage {
	return []pipeline.Stage{
		Preflight{More: []func(*pipeline.Env) []preflight.Check{MirrorPreflightChecks}},
		Mirror{},
		ISO{},
		Boot{Serve: ServeISO(iso), Evidence: iso.Evidence},
		Install{Serve: ServeISO(iso)},
		Configure{},
		Handoff{},
	}
}

// ServeISO adapts the ISO server to the stages: it serves the ISO the iso stage built (its
// journaled output), for the site and in the work dir of env, and tells the event sink where.
func ServeISO(iso *isoserver.Server) func(context.Context, *pipeline.Env) error {
	return func(ctx context.Context, env *pipeline.Env) error {
		out, ok, err := ISOOutputKey.Read(env)
		if err != nil {
			return fmt.Errorf("read the iso stage's output: %w", err)
		}
		c := isoserver.Config{Site: env.Site, WorkDir: env.WorkDir, Log: env.Log}
		if ok && out.Build != nil {
			c.ISO, c.SHA256, c.URL = out.Build.ISO, out.Build.SHA256, out.URL
		}
		if env.Events != nil {
			c.OnServing = func(msg string) {
				env.Events(pipeline.Event{Time: time.Now(), Kind: pipeline.Info, Stage: NameBoot, Message: msg})
			}
		}
		return iso.Ensure(ctx, c)
	}
}
