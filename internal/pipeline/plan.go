package pipeline

import (
	"context"
	"errors"
	"fmt"
)

// Plan actions.
const (
	PlanRun  = "run"
	PlanSkip = "skip"
)

// StagePlan is what Run would do with one stage, and why.
type StagePlan struct {
	Stage       string   `json:"stage"`
	Summary     string   `json:"summary"`
	Action      string   `json:"action"` // PlanRun or PlanSkip
	Reason      string   `json:"reason"`
	Fingerprint string   `json:"fingerprint,omitempty"`
	Lines       []string `json:"lines,omitempty"` // the stage's own Plan, when it has one
	Error       string   `json:"error,omitempty"` // inputs, verify or plan failed
}

// Plan says what Run would do, changing nothing: it reads the journal without the lock, computes
// each stage's fingerprint, calls Verify on finished stages (read-only by contract) and each
// Planner. Later stages are shown as running when an earlier one would run with new inputs.
func (r *Runner) Plan(ctx context.Context) ([]StagePlan, error) {
	entries, _, err := ReadJournal(JournalPath(r.WorkDir))
	if err != nil {
		return nil, err
	}
	status := Fold(entries)
	plans := make([]StagePlan, 0, len(r.Stages))
	upstream := ""
	for i, stg := range r.Stages {
		name := stg.Name()
		p := StagePlan{Stage: name, Summary: stg.Summary(), Action: PlanRun}
		prev := status.Stage(name)
		env := (&session{r: r}).env(i, status, false, nil)
		inputs, err := stg.Inputs(env)
		if err == nil {
			p.Fingerprint, err = Fingerprint(inputs)
		}
		always := alwaysRuns(stg)
		v, verifies := stg.(Verifier)
		var verify func() error
		if verifies {
			verify = func() error { return verifyWithOwnOutput(ctx, v, env, name, prev.Output) }
		}
		if err != nil {
			p.Error = r.scrubText(err.Error())
			p.Reason = "inputs cannot be computed yet"
		} else if why, verr := resumeReason(prev, p.Fingerprint, false, always, upstream, verify); why != "" {
			p.Reason = why
			if verr != nil {
				p.Reason = r.scrubText(why)
			}
		} else {
			p.Action, p.Reason = PlanSkip, skipReason(verifies)
		}
		if p.Action == PlanRun && upstream == "" && staleLater(prev, p.Fingerprint, always) {
			upstream = fmt.Sprintf("stale: %s runs with new inputs", name)
		}
		if pl, ok := stg.(Planner); ok && p.Action == PlanRun && err == nil {
			lines, perr := pl.Plan(ctx, env)
			if perr != nil {
				p.Error = r.scrubText(perr.Error())
			}
			p.Lines = lines
		}
		plans = append(plans, p)
	}
	return plans, nil
}

// readOnlySteps is the Steps a stage sees outside Run (Inputs, Verify, Plan): nothing is done,
// nothing may be recorded.
type readOnlySteps struct{}

// Done reports nothing done.
func (readOnlySteps) Done(string, any) bool { return false }

// Previous reports nothing done.
func (readOnlySteps) Previous(string, any) bool { return false }

// Record refuses: only Run may record.
func (readOnlySteps) Record(key string, _ any) error {
	return fmt.Errorf("record step %s: only Run may record steps", key)
}

// Status folds the journal for `bootstrap status`: stages in the runner's order (unknown ones
// from the journal after them), the chain check, the head hash and the lock holder. Stages still
// "running" whose run no longer holds the lock are shown interrupted.
func (r *Runner) Status() (Status, error) {
	st, _, err := r.StatusEntries()
	return st, err
}

// StatusEntries is Status together with the journal's entries it folded (those before any
// damage), for callers that need both: the journal is read once, streaming, checking the hash
// chain and the witness as it goes.
func (r *Runner) StatusEntries() (Status, []Entry, error) {
	path := JournalPath(r.WorkDir)
	// the witness before the journal, as VerifyTail reads them: a live run writes them the other way
	h, witnessed, herr := readHead(path)
	var want []int64
	if witnessed {
		want = []int64{h.Entries, h.Entries - 1}
	}
	p, err := readPass(path, true, want...)
	if err != nil {
		return Status{}, nil, fmt.Errorf("read journal: %w", err)
	}
	entries := p.entries
	st := Fold(entries)
	if p.torn > 0 {
		st.Warnings = append([]string{tornWarning(path, p.torn)}, st.Warnings...)
	}
	if verr := p.chainErr(); verr != nil {
		st.Chain = verr.Error()
	}
	st.Head = p.hashAt(p.n)
	tail := func() (bool, error) { // the first tail check, from this pass
		if herr != nil {
			return false, herr
		}
		if !witnessed {
			if p.n > 0 {
				return false, &TailError{Path: path, Kind: TailUnwitnessed, Entries: p.n}
			}
			return false, nil
		}
		_, terr := checkTailHashes(path, p.n, p.hashAt, h)
		return true, terr
	}
	info, held, lerr := ReadLock(r.WorkDir)
	if lerr != nil {
		st.Warnings = append(st.Warnings, "lock: "+lerr.Error())
	}
	if st.Chain == "" {
		r.statusTail(path, &st, held && LockAlive(info), tail)
	}
	if held {
		st.Lock = &info
	}
	if !held || !LockAlive(info) {
		st.MarkKilled()
	}
	ordered := make([]StageStatus, 0, len(st.Stages))
	seen := map[string]bool{}
	for _, stg := range r.Stages {
		ordered = append(ordered, st.Stage(stg.Name()))
		seen[stg.Name()] = true
	}
	for _, ss := range st.Stages {
		if !seen[ss.Name] {
			ordered = append(ordered, ss)
		}
	}
	st.Stages = ordered
	return st, entries, nil
}

// statusTail checks the journal's end against its witness. A live run appends while we read (the
// witness and the journal are read one after the other), so a mismatch is read again, and while
// a run holds the lock a lasting one is only a warning.
// first is the check from the status's own read of the journal.
func (r *Runner) statusTail(path string, st *Status, live bool, first func() (bool, error)) {
	_, err := first()
	for i := 1; i < 5 && err != nil && live; i++ {
		_, err = VerifyTail(path)
	}
	var te *TailError
	switch {
	case err == nil:
	case live:
		st.Warnings = append(st.Warnings, "journal end not checked while a run appends: "+err.Error())
	case errors.As(err, &te):
		st.Chain, st.Tail = err.Error(), te.Kind
	default:
		st.Chain = err.Error()
	}
}
