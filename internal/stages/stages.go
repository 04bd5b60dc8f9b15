package stages

import "github.com/bootstrap-dev/bootstrap/internal/pipeline"

// All returns the pipeline's stages in their fixed order.
func All() []pipeline.Stage {
	return []pipeline.Stage{
		Preflight{},
		Mirror{},
		ISO{},
		Boot{},
	}
}
