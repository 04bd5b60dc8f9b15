package stages

import (
	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
	"github.com/bootstrap-dev/bootstrap/internal/preflight"
)

// All returns the pipeline's stages in their fixed order.
func All() []pipeline.Stage {
	// One ISO server per process: the boot stage starts it and it keeps serving while the later
	// stages run (the nodes read the ISO until install ends).
	iso := &ISOServer{}
	return []pipeline.Stage{
		Preflight{More: []func(*pipeline.Env) []preflight.Check{MirrorPreflightChecks}},
		Mirror{},
		ISO{},
		Boot{Serve: iso.Ensure},
		Install{},
		Configure{},
		Handoff{},
	}
}
