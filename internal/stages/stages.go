package stages

import (
	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
	"github.com/bootstrap-dev/bootstrap/internal/preflight"
)

// All returns the pipeline's stages in their fixed order, with an ISO server of their own (for
// listing the stages; a command that runs them uses WithISOServer and owns the server).
func All() []pipeline.Stage { return WithISOServer(&ISOServer{}) }

// WithISOServer returns the pipeline's stages in their fixed order, sharing iso: the boot stage
// and the install stage (nodes read their live ISO until they have written their disks) each
// make sure it serves, so a run resumed in install serves the ISO too; the boot stage takes its
// fetch log as the evidence that a node read its ISO after its power action. The caller owns
// iso and closes it when the process ends.
func WithISOServer(iso *ISOServer) []pipeline.Stage {
	return []pipeline.Stage{
		Preflight{More: []func(*pipeline.Env) []preflight.Check{MirrorPreflightChecks}},
		Mirror{},
		ISO{},
		Boot{Serve: iso.Ensure, Evidence: iso.Evidence},
		Install{Serve: iso.Ensure},
		Configure{},
		Handoff{},
	}
}
