package pipeline

import (
	"encoding/json"
	"strings"
	"time"
)

// History is everything the journal records, in order: every run and every attempt of every
// stage with each of its executions (the first one and every resume after a failure, Ctrl-C or
// kill) and the steps each journaled. Status keeps only the latest attempt of each stage; the
// evidence report needs all of them.
type History struct {
	Runs     []RunRecord     `json:"runs"`
	Attempts []AttemptRecord `json:"attempts"` // in the order they started
}

// RunRecord is one invocation of run or replay.
type RunRecord struct {
	Seq     int64     `json:"seq"` // seq of its run-started entry; entries name their run by it
	Info    RunInfo   `json:"info"`
	Started time.Time `json:"started"`
	// Finished is the run-finished time, or the time of the run's last entry when it was killed.
	Finished time.Time `json:"finished,omitzero"`
	Result   RunResult `json:"result"`
	Error    string    `json:"error,omitempty"`
	Ran      []string  `json:"ran,omitempty"`     // stages it executed, in order
	Skipped  []string  `json:"skipped,omitempty"` // stages it found finished with the same inputs
	last     time.Time
}

// RunResult is how a run ended.
type RunResult string

// Run results.
const (
	RunSucceeded RunResult = "succeeded"
	RunFailed    RunResult = "failed"
	RunKilled    RunResult = "killed"  // no run-finished entry: killed or power loss
	RunRunning   RunResult = "running" // no run-finished entry yet, and the run may be alive
)

// AttemptRecord is one attempt of one stage: it starts afresh (first run, new inputs, stale,
// replay) and is resumed by later runs until it succeeds or a new attempt replaces it.
type AttemptRecord struct {
	Stage       string `json:"stage"`
	Attempt     int    `json:"attempt"`
	Fingerprint string `json:"fingerprint,omitempty"`
	Reason      string `json:"reason,omitempty"` // why it started
	// State is the outcome of its last execution (succeeded, failed, interrupted, running).
	State    StageState `json:"state"`
	Started  time.Time  `json:"started,omitzero"`
	Finished time.Time  `json:"finished,omitzero"`
	Seconds  float64    `json:"seconds"` // time running, summed over its executions
	// Latest is true for the stage's latest attempt (the one status shows).
	Latest bool `json:"latest,omitempty"`
	// Stale is why the attempt was marked stale after it succeeded (an earlier stage changed).
	Stale      string          `json:"stale,omitempty"`
	Output     json.RawMessage `json:"output,omitempty"` // when it succeeded
	Executions []Execution     `json:"executions"`
	Steps      []StepRecord    `json:"steps,omitempty"`
}

// Execution is one execution of an attempt, from its stage-started entry to its end.
type Execution struct {
	Run      int64      `json:"run"`
	Started  time.Time  `json:"started"`
	Finished time.Time  `json:"finished,omitzero"`
	Seconds  float64    `json:"seconds"`
	State    StageState `json:"state"`
	Reason   string     `json:"reason,omitempty"`
	Error    string     `json:"error,omitempty"`
	Remedy   string     `json:"remedy,omitempty"`
	Steps    int        `json:"steps"` // steps this execution journaled
	last     time.Time
}

// StepRecord is one step-done entry.
type StepRecord struct {
	Seq  int64           `json:"seq"`
	Time time.Time       `json:"time"`
	Run  int64           `json:"run"`
	Key  string          `json:"key"`
	Data json.RawMessage `json:"data,omitempty"`
}

// Node returns the node the step acts on (a NodeStep key), or "".
func (s StepRecord) Node() string { return stepNode(s.Key) }

// Action returns what the step did on its node ("power" for "node:w1/power"), or "".
func (s StepRecord) Action() string {
	n := stepNode(s.Key)
	if n == "" || len(s.Key) <= len(nodeStepPrefix)+len(n)+1 {
		return ""
	}
	return s.Key[len(nodeStepPrefix)+len(n)+1:]
}

// killedError is the error text of an execution or run that ended without an end entry.
const killedError = interruptedPrefix + ": the run stopped without recording an end (killed or power loss)"

// BuildHistory replays entries into a History. Executions and runs still open at the end of the
// journal stay running; MarkKilled closes them when no live run holds the work dir.
func BuildHistory(entries []Entry) History {
	var h History
	type attemptKey struct {
		stage   string
		attempt int
	}
	attempts := map[attemptKey]int{} // → index in h.Attempts
	latest := map[string]int{}       // stage → index of its latest attempt
	open := map[string]int{}         // stage → index of the attempt with an open execution
	runs := map[int64]int{}          // run seq → index in h.Runs
	get := func(e *Entry) *AttemptRecord {
		k := attemptKey{e.Stage, e.Attempt}
		i, ok := attempts[k]
		if !ok {
			i = len(h.Attempts)
			attempts[k] = i
			h.Attempts = append(h.Attempts, AttemptRecord{Stage: e.Stage, Attempt: e.Attempt, State: StatePending,
				Fingerprint: e.Fingerprint})
		}
		if j, ok := latest[e.Stage]; !ok || h.Attempts[j].Attempt <= e.Attempt {
			latest[e.Stage] = i
		}
		return &h.Attempts[i]
	}
	closeExec := func(stage string, t time.Time, state StageState, errText, remedy string) *AttemptRecord {
		i, ok := open[stage]
		if !ok {
			return nil
		}
		delete(open, stage)
		a := &h.Attempts[i]
		x := &a.Executions[len(a.Executions)-1]
		x.Finished, x.State, x.Error, x.Remedy = t, state, errText, remedy
		x.Seconds = t.Sub(x.Started).Seconds()
		a.Seconds += x.Seconds
		a.State, a.Finished = state, t
		return a
	}
	for i := range entries {
		e := &entries[i]
		if ri, ok := runs[e.Run]; ok {
			h.Runs[ri].last = e.Time
		}
		switch e.Kind {
		case EntryRunStarted:
			h.MarkKilled() // a run that starts proves the earlier ones are gone
			clear(open)
			var info RunInfo
			_ = json.Unmarshal(e.Data, &info) // best effort: the report must render any journal
			runs[e.Seq] = len(h.Runs)
			h.Runs = append(h.Runs, RunRecord{Seq: e.Seq, Info: info, Started: e.Time, Result: RunRunning, last: e.Time})
			continue
		case EntryRunFinished:
			if ri, ok := runs[e.Run]; ok {
				r := &h.Runs[ri]
				r.Finished, r.Error, r.Result = e.Time, e.Error, RunSucceeded
				if e.Error != "" {
					r.Result = RunFailed
				}
			}
			continue
		}
		if e.Stage == "" {
			continue
		}
		if i, ok := open[e.Stage]; ok {
			a := &h.Attempts[i]
			a.Executions[len(a.Executions)-1].last = e.Time
		}
		switch e.Kind {
		case EntryStageStarted:
			a := get(e)
			if len(a.Executions) == 0 {
				a.Started, a.Reason, a.Fingerprint = e.Time, e.Reason, e.Fingerprint
			}
			a.State, a.Finished, a.Stale = StateRunning, time.Time{}, ""
			a.Executions = append(a.Executions, Execution{Run: e.Run, Started: e.Time, State: StateRunning,
				Reason: e.Reason, last: e.Time})
			open[e.Stage] = attempts[attemptKey{e.Stage, e.Attempt}]
			h.addRan(runs, e.Run, e.Stage)
		case EntryStepDone:
			a := get(e)
			a.Steps = append(a.Steps, StepRecord{Seq: e.Seq, Time: e.Time, Run: e.Run, Key: e.Step, Data: e.Data})
			if i, ok := open[e.Stage]; ok && &h.Attempts[i] == a {
				a.Executions[len(a.Executions)-1].Steps++
			}
		case EntryStageSucceeded:
			a := closeExec(e.Stage, e.Time, StateSucceeded, "", "")
			if a == nil {
				a = get(e)
				a.State, a.Finished = StateSucceeded, e.Time
			}
			a.Output = e.Data
		case EntryStageFailed:
			state := StateFailed
			if strings.HasPrefix(e.Error, interruptedPrefix) {
				state = StateInterrupted
			}
			if closeExec(e.Stage, e.Time, state, e.Error, e.Remedy) == nil {
				// Failed before it started (its inputs could not be read, or Ctrl-C between
				// stages): an execution of no time.
				a := get(e)
				if a.Started.IsZero() {
					a.Started = e.Time
				}
				a.Executions = append(a.Executions, Execution{Run: e.Run, Started: e.Time, Finished: e.Time,
					State: state, Error: e.Error, Remedy: e.Remedy})
				a.State, a.Finished = state, e.Time
				h.addRan(runs, e.Run, e.Stage)
			}
		case EntryStageSkipped:
			if ri, ok := runs[e.Run]; ok {
				h.Runs[ri].Skipped = append(h.Runs[ri].Skipped, e.Stage)
			}
		case EntryStageStale:
			get(e).Stale = e.Reason
		}
	}
	for _, i := range latest {
		h.Attempts[i].Latest = true
	}
	return h
}

func (h *History) addRan(runs map[int64]int, run int64, stage string) {
	ri, ok := runs[run]
	if !ok {
		return
	}
	r := &h.Runs[ri]
	for _, s := range r.Ran {
		if s == stage {
			return
		}
	}
	r.Ran = append(r.Ran, stage)
}

// MarkKilled closes the executions and runs still open at the end of the journal as killed;
// call it when no live run holds the work dir (Status.Lock nil or its holder dead).
func (h *History) MarkKilled() {
	for i := range h.Attempts {
		a := &h.Attempts[i]
		if a.State != StateRunning || len(a.Executions) == 0 {
			continue
		}
		x := &a.Executions[len(a.Executions)-1]
		x.Finished, x.State, x.Error = x.last, StateInterrupted, killedError
		x.Remedy = "run `bootstrap run` again: it resumes after the last journaled step"
		x.Seconds = x.last.Sub(x.Started).Seconds()
		a.Seconds += x.Seconds
		a.State, a.Finished = StateInterrupted, x.last
	}
	for i := range h.Runs {
		if r := &h.Runs[i]; r.Result == RunRunning {
			r.Result, r.Finished, r.Error = RunKilled, r.last, killedError
		}
	}
}

// Attempt returns the record of one attempt of a stage, or nil.
func (h History) Attempt(stage string, attempt int) *AttemptRecord {
	for i := range h.Attempts {
		if h.Attempts[i].Stage == stage && h.Attempts[i].Attempt == attempt {
			return &h.Attempts[i]
		}
	}
	return nil
}
