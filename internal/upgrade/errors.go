package upgrade

import "fmt"

// Reason says which kind of input a Refusal is about; callers branch on it, never on text.
type Reason string

// The reasons a plan is refused. Each is bad or missing input, never a transient failure: the
// CLI exits 3 (invalid input) for all of them.
const (
	ReasonGraph         Reason = "graph"          // a graph file unreadable, truncated, malformed or too large
	ReasonHash          Reason = "hash"           // a graph file not hashing to its content.json entry, or missing
	ReasonState         Reason = "state"          // the cluster state unreadable or incomplete
	ReasonUnknownTarget Reason = "unknown-target" // --to names no release of the carried graph
	ReasonOlderTarget   Reason = "older-target"   // --to is not newer than the cluster's version
	ReasonNoPath        Reason = "no-path"        // no path one minor per hop over usable edges
	ReasonRisk          Reason = "risk"           // the only paths need risks nobody accepted
	ReasonNotCarried    Reason = "not-carried"    // a hop's release is not in content.json
	ReasonAcceptance    Reason = "acceptance"     // an --accept-risk value malformed
)

// Refusal is why no plan can be made from the inputs given: what is missing or wrong, and what
// would bring it (Remedy).
type Refusal struct {
	Reason Reason `json:"reason"`
	// File is the input file concerned, when one is.
	File string `json:"file,omitempty"`
	Msg  string `json:"message"`
	Fix  string `json:"remedy,omitempty"`
	// Err is the underlying error, when one is (fsroot's refusals of a file): errors.Is/As see it.
	Err error `json:"-"`
}

// Unwrap returns the underlying error.
func (r *Refusal) Unwrap() error { return r.Err }

func (r *Refusal) Error() string {
	if r.File != "" {
		return fmt.Sprintf("%s: %s", r.File, r.Msg)
	}
	return r.Msg
}

// Remedy says what input would let the plan be made.
func (r *Refusal) Remedy() string { return r.Fix }

func refuse(reason Reason, file, fix, format string, args ...any) *Refusal {
	return &Refusal{Reason: reason, File: file, Msg: fmt.Sprintf(format, args...), Fix: fix}
}
