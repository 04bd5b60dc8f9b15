package stages

import "github.com/bootstrap-dev/bootstrap/internal/pipeline"

// All returns the pipeline's stages in their fixed order.
func All() []pipeline.Stage {
	// One ISO server per process: the boot stage starts it and it keeps serving while the later
	// stages run (the nodes read the ISO until install ends).
	iso := &ISOServer{}
	return []pipeline.Stage{
		Preflight{},
		Mirror{},
		ISO{},
		Boot{Serve: iso.Ensure},
	}
}
