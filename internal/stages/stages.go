// Package stages adapts the domain packages (preflight, mirror, agentiso, bmc, cluster, handoff)
// into pipeline stages. Each adapter is thin: it turns the site profile into the domain package's
// typed options, calls it, and records steps and outputs through the pipeline.Env.
package stages

import "github.com/bootstrap-dev/bootstrap/internal/pipeline"

// All returns the pipeline's stages in their fixed order.
func All() []pipeline.Stage {
	return []pipeline.Stage{}
}
