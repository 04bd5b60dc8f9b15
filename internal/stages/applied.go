package stages

import (
	"fmt"
	"sync"

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
// (created, configured, unchanged, patched), one step per object as it is applied; the
// evidence report lists these steps.
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

// changeLog journals each change the client makes as it makes it: one AppliedStep per object
// applied (created, configured or unchanged) and per patch (an InstallPlan approved), so what an
// attempt did is on record even when it is killed halfway. Its option goes to the client.
type changeLog struct {
	env *pipeline.Env
	mu  sync.Mutex
	err error
}

func newChangeLog(env *pipeline.Env) *changeLog { return &changeLog{env: env} }

func (l *changeLog) option() cluster.Option { return cluster.WithChangeHook(l.record) }

func (l *changeLog) record(a cluster.Applied) {
	if l.env.Steps == nil {
		return
	}
	changed := 1
	if a.Action == cluster.Unchanged {
		changed = 0
	}
	err := l.env.Steps.Record(AppliedStep, appliedRecord{Objects: []cluster.Applied{a}, Changed: changed})
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil && l.err == nil {
		l.err = err
	}
}

// done says what the applies did and returns the first journaling error.
func (l *changeLog) done(ev func(pipeline.EventKind, string, string), applied []cluster.Applied, changed int) error {
	switch {
	case len(applied) == 0:
	case changed == 0:
		ev(pipeline.Info, "", fmt.Sprintf("nothing changed: all %d objects were already as applied", len(applied)))
	default:
		ev(pipeline.Info, "", fmt.Sprintf("%d of %d objects created or configured", changed, len(applied)))
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}
