package pipeline

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// Stage is one step of the pipeline. Stages are small values; the runner owns order, the journal,
// fingerprints and resume.
type Stage interface {
	// Name is a stable lower-case word: a CLI argument and a journal key.
	Name() string
	// Summary is one line for help output.
	Summary() string
	// Inputs returns what the stage depends on; the runner hashes its JSON into the stage's input
	// fingerprint. A change of fingerprint makes the stage (and every later one) run again.
	// It must not hold secret values (hash files by content if needed, never embed secrets).
	Inputs(env *Env) (any, error)
	// Run does the work. Finished steps are recorded with env.Steps and skipped on resume.
	// The returned output is stored in the journal (JSON) and visible to later stages.
	Run(ctx context.Context, env *Env) (any, error)
}

// Verifier is implemented by stages that can check, read-only, that the world still matches a
// previous success. The runner calls it before skipping a finished stage; during Verify,
// env.Outputs also holds the stage's own last successful output under its own name.
type Verifier interface {
	Verify(ctx context.Context, env *Env) error
}

// AlwaysRunner is implemented by read-only stages (preflight) that run on every pass, even after
// a success with unchanged inputs, when AlwaysRun returns true. Their runs never make later
// stages stale, so their output must not be an input of later stages.
type AlwaysRunner interface {
	AlwaysRun() bool
}

// NodeScoped is implemented by stages that can act on some nodes only (replay --node).
type NodeScoped interface {
	NodeScoped() bool
}

// Planner is implemented by stages that can say what they would do without changing anything.
type Planner interface {
	Plan(ctx context.Context, env *Env) ([]string, error)
}

// Env is everything a stage sees. Only the runner creates it.
type Env struct {
	Site    *site.Site
	WorkDir string // absolute path of the work dir (.bootstrap/)
	// Nodes, when non-empty, limits node-level stages to these node names (replay --node).
	Nodes []string
	// Replay is true when the stage runs because the user asked for it by name.
	Replay bool
	// Outputs are the journaled outputs of earlier stages, by stage name.
	Outputs map[string]json.RawMessage
	Steps   Steps
	Events  Sink
	Log     *slog.Logger
	// Scrub, when set, is the runner's secret scrubber: a stage passes a file it writes for
	// operators (a report, a results file) through it. Nil scrubs nothing.
	Scrub func([]byte) []byte
}

// ScrubBytes applies Scrub when it is set.
func (e *Env) ScrubBytes(b []byte) []byte {
	if e == nil || e.Scrub == nil {
		return b
	}
	return e.Scrub(b)
}

// WantNode reports whether a node-level stage should act on the named node.
func (e *Env) WantNode(name string) bool {
	if len(e.Nodes) == 0 {
		return true
	}
	for _, n := range e.Nodes {
		if n == name {
			return true
		}
	}
	return false
}

// Steps records finished steps inside a stage so a resumed run skips them.
// Implementations are safe for concurrent use.
type Steps interface {
	// Done reports whether the step was journaled as done in the current attempt of this stage
	// (with the same input fingerprint) and, if so, decodes its recorded data into out (may be nil).
	Done(key string, out any) bool
	// Record journals the step as done, with data (no secrets). It returns after the entry is on disk.
	Record(key string, data any) error
	// Previous reports whether the step was journaled as done in an earlier attempt of this stage
	// (any input fingerprint, whether that attempt finished or not) and, if so, decodes the data
	// of the latest such record into out (may be nil). It never looks at the current attempt (see
	// Done) and reports false in a replay, which starts afresh by definition. A stage uses it to
	// carry per-item work across attempts when the item's own inputs are unchanged: it must then
	// record those inputs (e.g. a per-item fingerprint) in the step data and compare them itself.
	Previous(key string, out any) bool
}

// EventKind says what an Event reports.
type EventKind string

// Event kinds.
const (
	StageStarted   EventKind = "stage-started"
	StageSucceeded EventKind = "stage-succeeded"
	StageFailed    EventKind = "stage-failed"
	StageSkipped   EventKind = "stage-skipped"
	StageStale     EventKind = "stage-stale" // a finished stage must run again (an earlier one changed)
	StepDone       EventKind = "step-done"
	Progress       EventKind = "progress" // Current/Total in Unit (bytes, images, nodes)
	Info           EventKind = "info"
	Warning        EventKind = "warning"
	// Failure is something found failed that the stage reports in a list (a preflight FAIL),
	// distinct from a Warning; whether the stage fails is its own StageFailed.
	Failure EventKind = "failure"
)

// UnitPhases is the Unit of a Progress event that reports phases rather than amounts: Current is
// the phase (1-based) of Total, Step its name, Done/DoneTotal the items finished (nodes), Message
// the items' states. Renderers show "phase 3/6 installing · nodes 2/5 done · …".
const UnitPhases = "phases"

// Event is one thing that happened, for display. Events are not the journal.
type Event struct {
	Time    time.Time `json:"time"`
	Kind    EventKind `json:"kind"`
	Stage   string    `json:"stage,omitempty"`
	Step    string    `json:"step,omitempty"`
	Node    string    `json:"node,omitempty"`
	Message string    `json:"message,omitempty"`
	// Status is a checked item's verdict (PASS, WARN, FAIL) when the event reports one.
	Status  string `json:"status,omitempty"`
	Current int64  `json:"current,omitempty"`
	Total   int64  `json:"total,omitempty"`
	Unit    string `json:"unit,omitempty"`
	// Done counts finished items (images, nodes) next to byte progress.
	Done      int64 `json:"done,omitempty"`
	DoneTotal int64 `json:"doneTotal,omitempty"`
	// Parts counts the pieces items are made of (an image's blobs), in PartsUnit: items may all
	// finish late (the mirror copies the largest blobs first) while their parts move throughout.
	Parts      int64  `json:"parts,omitempty"`
	PartsTotal int64  `json:"partsTotal,omitempty"`
	PartsUnit  string `json:"partsUnit,omitempty"`
}

// Sink receives events. It must be cheap and safe to call from many goroutines.
type Sink func(Event)

// verifyWithOwnOutput calls v.Verify with the stage's own last output visible in env.Outputs
// (what the previous success produced is what Verify checks), then hides it again so Run sees
// only earlier stages' outputs.
func verifyWithOwnOutput(ctx context.Context, v Verifier, env *Env, name string, own json.RawMessage) error {
	if len(own) == 0 {
		return v.Verify(ctx, env)
	}
	prev, had := env.Outputs[name]
	if env.Outputs == nil {
		env.Outputs = map[string]json.RawMessage{}
	}
	env.Outputs[name] = own
	defer func() {
		if had {
			env.Outputs[name] = prev
		} else {
			delete(env.Outputs, name)
		}
	}()
	return v.Verify(ctx, env)
}
