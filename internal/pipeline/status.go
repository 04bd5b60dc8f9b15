package pipeline

import (
	"encoding/json"
	"sort"
	"strings"
	"time"
)

// StageState is a stage's state as the journal tells it.
type StageState string

// Stage states.
const (
	StatePending     StageState = "pending"     // never started
	StateRunning     StageState = "running"     // started, no end recorded (running now, or killed)
	StateSucceeded   StageState = "succeeded"   // last attempt finished
	StateFailed      StageState = "failed"      // last attempt returned an error
	StateInterrupted StageState = "interrupted" // cancelled (Ctrl-C) or killed mid-stage
	StateStale       StageState = "stale"       // finished once, but an earlier stage changed since
)

// interruptedPrefix starts the error text of a stage cancelled by its context.
const interruptedPrefix = "interrupted"

// NodeStatus is what a stage did on one node (steps keyed with NodeStep).
type NodeStatus struct {
	Name  string    `json:"name"`
	Steps int       `json:"steps"`
	Last  string    `json:"last"`
	Time  time.Time `json:"time"`
}

// StageStatus is one stage folded from the journal. Step and node counts and timings are those
// of the current attempt.
type StageStatus struct {
	Name        string       `json:"name"`
	State       StageState   `json:"state"`
	Attempt     int          `json:"attempt,omitempty"`
	Fingerprint string       `json:"fingerprint,omitempty"`
	Started     time.Time    `json:"started,omitzero"`
	Finished    time.Time    `json:"finished,omitzero"`
	Seconds     float64      `json:"seconds"` // time spent running in this attempt, across resumes
	Runs        int          `json:"runs"`    // executions of this attempt (1 + resumes)
	Steps       int          `json:"steps"`
	LastStep    string       `json:"lastStep,omitempty"`
	Nodes       []NodeStatus `json:"nodes,omitempty"`
	Skipped     bool         `json:"skipped,omitempty"` // the latest run found it finished and skipped it
	Reason      string       `json:"reason,omitempty"`  // why it was skipped, re-run or marked stale
	Error       string       `json:"error,omitempty"`
	Remedy      string       `json:"remedy,omitempty"`
	// Output, SucceededFingerprint (the input fingerprint it ran with) and Succeeded (when) are
	// those of the last success, kept while stale or re-running.
	Output               json.RawMessage `json:"output,omitempty"`
	SucceededFingerprint string          `json:"succeededFingerprint,omitempty"`
	Succeeded            time.Time       `json:"succeeded,omitzero"`

	runStart time.Time // start of the current execution, while running
	lastSeen time.Time
	// replay and replayNodes say the attempt was started by `replay <stage> [--node …]`, so
	// that the same replay, run again after it was interrupted, resumes it (run.go).
	replay      bool
	replayNodes []string
	steps       map[string]bool
	nodes       map[string]*NodeStatus
}

// RunSummary describes the latest run.
type RunSummary struct {
	Seq      int64     `json:"seq"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished,omitzero"`
	Info     RunInfo   `json:"info"`
	Error    string    `json:"error,omitempty"`
	Ended    bool      `json:"ended"` // a run-finished entry exists (false: running, or killed)
}

// Status is the journal folded: the view behind `bootstrap status` and the report.
type Status struct {
	Entries  int           `json:"entries"`
	Runs     int           `json:"runs"`
	LastRun  *RunSummary   `json:"lastRun,omitempty"`
	Stages   []StageStatus `json:"stages"`
	Warnings []string      `json:"warnings,omitempty"`
	// Head is the hash of the newest line; record it elsewhere to protect the newest entry too.
	Head string `json:"head,omitempty"`
	// Chain is empty when the journal's integrity holds: the hash chain verifies and its end
	// matches the witness; else the *ChainError or *TailError text.
	Chain string `json:"chain,omitempty"`
	// Tail names what happened to the journal's end when it does not match its witness:
	// TailTruncated (rolled back), TailEdited or TailExtended.
	Tail string `json:"tail,omitempty"`
	// Lock is the current lock holder, when the work dir is locked.
	Lock *LockInfo `json:"lock,omitempty"`
}

// Stage returns the named stage's status (State pending when the journal never mentions it).
func (s Status) Stage(name string) StageStatus {
	for _, st := range s.Stages {
		if st.Name == name {
			return st
		}
	}
	return StageStatus{Name: name, State: StatePending}
}

// Fold replays entries into a Status. Stages appear in the order the journal first names them.
func Fold(entries []Entry) Status {
	var s Status
	s.Entries = len(entries)
	idx := map[string]int{}
	get := func(name string) *StageStatus {
		i, ok := idx[name]
		if !ok {
			i = len(s.Stages)
			idx[name] = i
			s.Stages = append(s.Stages, StageStatus{Name: name, State: StatePending})
		}
		return &s.Stages[i]
	}
	for i := range entries {
		e := &entries[i]
		switch e.Kind {
		case EntryRunStarted:
			s.Runs++
			var info RunInfo
			_ = json.Unmarshal(e.Data, &info) // best effort: status must fold any journal
			s.LastRun = &RunSummary{Seq: e.Seq, Started: e.Time, Info: info}
			for i := range s.Stages {
				killed(&s.Stages[i])
			}
		case EntryRunFinished:
			if s.LastRun != nil {
				s.LastRun.Finished, s.LastRun.Error, s.LastRun.Ended = e.Time, e.Error, true
			}
		case EntryWarning:
			s.Warnings = append(s.Warnings, e.Error)
		}
		if e.Stage == "" {
			continue
		}
		st := get(e.Stage)
		st.lastSeen = e.Time
		switch e.Kind {
		case EntryStageStarted:
			if e.Attempt != st.Attempt || st.steps == nil {
				st.Attempt, st.Started, st.Seconds, st.Runs, st.Steps, st.LastStep = e.Attempt, e.Time, 0, 0, 0, ""
				st.steps, st.nodes, st.Nodes = map[string]bool{}, map[string]*NodeStatus{}, nil
				st.replay, st.replayNodes = false, nil
				if s.LastRun != nil && s.LastRun.Info.Mode == "replay" && s.LastRun.Info.Stage == e.Stage {
					st.replay, st.replayNodes = true, s.LastRun.Info.Nodes
				}
			}
			st.State, st.Fingerprint, st.runStart, st.Runs = StateRunning, e.Fingerprint, e.Time, st.Runs+1
			st.Skipped, st.Reason, st.Error, st.Remedy, st.Finished = false, e.Reason, "", "", time.Time{}
		case EntryStepDone:
			if e.Attempt == st.Attempt && st.steps != nil {
				addStep(st, e)
			}
		case EntryStageSucceeded:
			endRun(st, e.Time)
			st.State, st.Output, st.SucceededFingerprint, st.Succeeded = StateSucceeded, e.Data, e.Fingerprint, e.Time
		case EntryStageFailed:
			endRun(st, e.Time)
			st.State, st.Error, st.Remedy = StateFailed, e.Error, e.Remedy
			if strings.HasPrefix(e.Error, interruptedPrefix) {
				st.State = StateInterrupted
			}
		case EntryStageSkipped:
			st.Skipped, st.Reason = true, e.Reason
		case EntryStageStale:
			st.State, st.Reason, st.Skipped = StateStale, e.Reason, false
		}
	}
	for i := range s.Stages {
		st := &s.Stages[i]
		for _, n := range st.nodes {
			st.Nodes = append(st.Nodes, *n)
		}
		sort.Slice(st.Nodes, func(a, b int) bool { return st.Nodes[a].Name < st.Nodes[b].Name })
	}
	return s
}

func addStep(st *StageStatus, e *Entry) {
	st.LastStep = e.Step
	if !st.steps[e.Step] {
		st.steps[e.Step] = true
		st.Steps++
	}
	if n := stepNode(e.Step); n != "" {
		ns := st.nodes[n]
		if ns == nil {
			ns = &NodeStatus{Name: n}
			st.nodes[n] = ns
		}
		ns.Steps++
		ns.Last, ns.Time = "", e.Time
		if rest := len(nodeStepPrefix) + len(n) + 1; len(e.Step) > rest {
			ns.Last = e.Step[rest:]
		}
	}
}

func endRun(st *StageStatus, t time.Time) {
	if !st.runStart.IsZero() {
		st.Seconds += t.Sub(st.runStart).Seconds()
	}
	st.runStart, st.Finished = time.Time{}, t
}

// killed turns a stage still running when a new run starts into an interrupted one: its run was
// killed without recording an end.
func killed(st *StageStatus) {
	if st.State != StateRunning {
		return
	}
	endRun(st, st.lastSeen)
	st.State = StateInterrupted
	st.Error = interruptedPrefix + ": the run stopped without recording an end (killed or power loss)"
	st.Remedy = "run `bootstrap run` again: it resumes after the last journaled step"
}

// MarkKilled turns stages still running into interrupted ones; status uses it when no live run
// holds the lock.
func (s *Status) MarkKilled() {
	for i := range s.Stages {
		killed(&s.Stages[i])
	}
}
