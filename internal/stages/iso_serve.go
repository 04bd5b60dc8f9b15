package stages

import (
	"context"
	"fmt"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/isoserver"
	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
)

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
