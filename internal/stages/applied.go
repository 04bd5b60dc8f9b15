package stages

import (
	"fmt"

	"github.com/bootstrap-dev/bootstrap/internal/cluster"
	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
)

// AppliedObject is one object a stage applied, as its journaled output holds it: what and the
// SHA-256 of the exact JSON sent, not what the apply did this time, so that a run that changes
// nothing finishes with the same output (and marks no later stage stale). What each apply did
// is journaled as the stage's AppliedStep and said in its events.
type AppliedObject struct {
	cluster.Ref
	SHA256 string `json:"sha256,omitempty"`
	Source string `json:"source,omitempty"`
}

// AppliedStep is the step key under which configure and handoff journal what each apply did
// (created, configured, unchanged); the evidence report lists these steps.
const AppliedStep = "applied"

// appliedRecord is the data of an AppliedStep.
type appliedRecord struct {
	Objects []cluster.Applied `json:"objects"`
	Changed int               `json:"changed"`
}

func appliedObjects(in []cluster.Applied) []AppliedObject {
	out := make([]AppliedObject, 0, len(in))
	for _, a := range in {
		out = append(out, AppliedObject{Ref: a.Ref, SHA256: a.SHA256, Source: a.Source})
	}
	return out
}

// recordApplied journals what the applies did and says whether anything changed.
func recordApplied(env *pipeline.Env, ev func(pipeline.EventKind, string, string), applied []cluster.Applied, changed int) error {
	if len(applied) == 0 {
		return nil
	}
	if env.Steps != nil {
		if err := env.Steps.Record(AppliedStep, appliedRecord{Objects: applied, Changed: changed}); err != nil {
			return err
		}
	}
	if changed == 0 {
		ev(pipeline.Info, "", fmt.Sprintf("nothing changed: all %d objects were already as applied", len(applied)))
	} else {
		ev(pipeline.Info, "", fmt.Sprintf("%d of %d objects created or configured", changed, len(applied)))
	}
	return nil
}
