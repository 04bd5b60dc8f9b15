package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"time"
)

// Run runs the pipeline within opts' window, resuming from the journal. A stage is skipped only
// when its last attempt succeeded, its input fingerprint is unchanged and its Verify (if any)
// still holds; otherwise it runs. When a stage runs with changed inputs (or for the first time),
// or finishes with an output different from its last success, every later finished stage is
// journaled stale and runs too. An AlwaysRunner stage runs every time and never makes others
// stale. Run returns *LockedError when another run holds the work dir,
// *ChainError when the journal's history is broken, *StageError when a stage fails.
func (r *Runner) Run(ctx context.Context, opts RunOptions) (err error) {
	first, last, err := r.window(opts)
	if err != nil {
		return err
	}
	s, err := r.open(RunInfo{Mode: "run", From: opts.From, Until: opts.Until})
	if err != nil {
		return err
	}
	defer func() { s.finish(err) }()
	status := s.j.fold()
	for i := range first {
		if st := status.Stage(r.Stages[i].Name()); st.State != StateSucceeded {
			s.warn(r.Stages[i].Name(), fmt.Sprintf("stage %s is %s and outside --from %s: later stages "+
				"may miss its output", r.Stages[i].Name(), st.State, opts.From))
		}
	}
	for i := first; i <= last; i++ {
		if err := ctx.Err(); err != nil {
			return &StageError{Stage: r.Stages[i].Name(), Err: fmt.Errorf("%s before start: %w", interruptedPrefix, err),
				remedy: "run `bootstrap run` again to continue"}
		}
		if err := s.stage(ctx, i, false, nil); err != nil {
			return err
		}
	}
	return nil
}

// CheckRun refuses an unknown --from or --until stage, or an empty window, before anything is
// opened: a *UsageError naming the valid stages.
func (r *Runner) CheckRun(opts RunOptions) error {
	_, _, err := r.window(opts)
	return err
}

func (r *Runner) window(opts RunOptions) (first, last int, err error) {
	first, last = 0, len(r.Stages)-1
	if opts.From != "" {
		if first, err = r.index(opts.From); err != nil {
			return 0, 0, err
		}
	}
	if opts.Until != "" {
		if last, err = r.index(opts.Until); err != nil {
			return 0, 0, err
		}
	}
	if first > last {
		return 0, 0, &UsageError{Err: fmt.Errorf("--from %s comes after --until %s: the stages run in the order %s",
			opts.From, opts.Until, strings.Join(r.StageNames(), ", "))}
	}
	return first, last, nil
}

// CheckReplay refuses an unknown stage, --node for a stage that acts on the whole site, and node
// names the site does not have, before anything is opened: a *UsageError naming the valid ones.
func (r *Runner) CheckReplay(stage string, nodes []string) error {
	i, err := r.index(stage)
	if err != nil {
		return err
	}
	return r.checkNodes(r.Stages[i], nodes)
}

// Replay runs one stage again even if it finished, as a fresh attempt (no journaled step is
// skipped), limited to nodes when given. Later stages become stale if its output changes.
func (r *Runner) Replay(ctx context.Context, stage string, nodes []string) (err error) {
	if err := r.CheckReplay(stage, nodes); err != nil {
		return err
	}
	i, _ := r.index(stage)
	s, err := r.open(RunInfo{Mode: "replay", Stage: stage, Nodes: nodes})
	if err != nil {
		return err
	}
	defer func() { s.finish(err) }()
	status := s.j.fold()
	for _, earlier := range r.Stages[:i] {
		if st := status.Stage(earlier.Name()); st.State != StateSucceeded {
			s.warn(earlier.Name(), fmt.Sprintf("stage %s is %s: %s may miss its output", earlier.Name(), st.State, stage))
		}
	}
	return s.stage(ctx, i, true, nodes)
}

// checkNodes refuses --node for a stage that acts on the whole site, and names that are not
// nodes of the site, before anything is opened or journaled.
func (r *Runner) checkNodes(st Stage, nodes []string) error {
	if len(nodes) == 0 {
		return nil
	}
	if ns, ok := st.(NodeScoped); !ok || !ns.NodeScoped() {
		var scoped []string
		for _, s := range r.Stages {
			if ns, ok := s.(NodeScoped); ok && ns.NodeScoped() {
				scoped = append(scoped, s.Name())
			}
		}
		return &UsageError{Err: fmt.Errorf("stage %s acts on the whole site: --node applies to %s only",
			st.Name(), strings.Join(scoped, ", "))}
	}
	var known []string
	if r.Site != nil {
		for _, n := range r.Site.Nodes {
			known = append(known, n.Name)
		}
	}
	var unknown []string
	for _, n := range nodes {
		if !slices.Contains(known, n) {
			unknown = append(unknown, n)
		}
	}
	if len(unknown) > 0 {
		return &UsageError{Err: fmt.Errorf("unknown node %s: the site's nodes are %s",
			strings.Join(unknown, ", "), strings.Join(known, ", "))}
	}
	return nil
}

// env builds a stage's Env from the journal's latest successful outputs.
func (s *session) env(i int, st Status, replay bool, nodes []string) *Env {
	r := s.r
	outputs := map[string]json.RawMessage{}
	for k := 0; k < i || (replay && k == i); k++ {
		if ss := st.Stage(r.Stages[k].Name()); len(ss.Output) > 0 {
			outputs[ss.Name] = ss.Output
		}
	}
	name := r.Stages[i].Name()
	return &Env{Site: r.Site, WorkDir: r.WorkDir, Nodes: nodes, Replay: replay, Outputs: outputs,
		Steps: readOnlySteps{}, Events: r.stageSink(name), Log: r.log().With("stage", name), Scrub: r.Scrub}
}

// stage decides whether stage i runs, and runs it.
func (s *session) stage(ctx context.Context, i int, replay bool, nodes []string) error {
	r, stg := s.r, s.r.Stages[i]
	name := stg.Name()
	status := s.j.fold()
	prev := status.Stage(name)
	env := s.env(i, status, replay, nodes)
	inputs, err := stg.Inputs(env)
	var fp string
	if err == nil {
		fp, err = Fingerprint(inputs)
	}
	if err != nil {
		return s.failed(ctx, name, prev.Attempt, "", fmt.Errorf("inputs: %w", err))
	}

	always := alwaysRuns(stg)
	v, verifies := stg.(Verifier)
	var verify func() error
	if verifies {
		verify = func() error { return verifyWithOwnOutput(ctx, v, env, name, prev.Output) }
	}
	why, verr := resumeReason(prev, fp, replay, always, "", verify)
	if verr != nil {
		if ctx.Err() != nil {
			return s.failed(ctx, name, prev.Attempt, fp, verr)
		}
		why = r.scrubText(why)
	}
	if why == "" {
		reason := skipReason(verifies)
		if _, err := s.j.Append(Entry{Kind: EntryStageSkipped, Run: s.run, Stage: name, Attempt: prev.Attempt,
			Fingerprint: fp, Reason: reason}); err != nil {
			return err
		}
		r.emit(Event{Kind: StageSkipped, Stage: name, Message: reason})
		return nil
	}

	// Resume the same attempt (keeping its journaled steps) only after an interruption or a
	// failure with unchanged inputs; anything else starts afresh. A replay starts afresh too
	// (that is what it is for), except the same replay interrupted (Ctrl-C, a kill): running it
	// again resumes it, so a node it powered is not powered twice.
	attempt := prev.Attempt
	resumable := prev.State == StateRunning || prev.State == StateFailed || prev.State == StateInterrupted
	resumeReplay := replay && prev.replay && slices.Equal(prev.replayNodes, nodes) &&
		(prev.State == StateRunning || prev.State == StateInterrupted)
	if (replay && !resumeReplay) || !resumable || prev.Fingerprint != fp || attempt == 0 {
		attempt++
	} else {
		why += fmt.Sprintf("; resuming attempt %d with %d steps done", attempt, prev.Steps)
	}
	if staleLater(prev, fp, always) {
		if err := s.markLater(i, status, fmt.Sprintf("%s runs with new inputs", name)); err != nil {
			return err
		}
	}
	if _, err := s.j.Append(Entry{Kind: EntryStageStarted, Run: s.run, Stage: name, Attempt: attempt,
		Fingerprint: fp, Reason: why}); err != nil {
		return err
	}
	r.emit(Event{Kind: StageStarted, Stage: name, Message: why})
	env.Steps = newStepBook(s.j, s.run, name, attempt, fp, replay, r.stageSink(name), r.Scrub)

	start := time.Now()
	out, err := runStage(ctx, stg, env)
	if err != nil {
		return s.failed(ctx, name, attempt, fp, err)
	}
	typed, isTyped := stg.(OutputTyped)
	if isTyped && !typed.OutputContract().Accepts(out) {
		return s.failed(ctx, name, attempt, fp, fmt.Errorf("output: the stage returned a %T, not the output type it declares", out))
	}
	raw, err := marshalData(out, r.Scrub)
	if err != nil {
		return s.failed(ctx, name, attempt, fp, fmt.Errorf("output: %w", err))
	}
	if isTyped {
		raw = stampVersion(raw, typed.OutputContract().Version())
	}
	// Compared without the stamps: a journal written before outputs were versioned is not a change.
	if !always && !bytes.Equal(unstamped(raw), unstamped(prev.Output)) && prev.SucceededFingerprint != "" {
		if err := s.markLater(i, s.j.fold(), fmt.Sprintf("%s output changed", name)); err != nil {
			return err
		}
	}
	if _, err := s.j.Append(Entry{Kind: EntryStageSucceeded, Run: s.run, Stage: name, Attempt: attempt,
		Fingerprint: fp, Data: raw}); err != nil {
		return err
	}
	r.emit(Event{Kind: StageSucceeded, Stage: name, Message: time.Since(start).Round(time.Millisecond).String()})
	return nil
}

// alwaysRuns reports whether a stage asks to run on every pass.
func alwaysRuns(stg Stage) bool {
	a, ok := stg.(AlwaysRunner)
	return ok && a.AlwaysRun()
}

// runStage calls Run, turning a panic into an error so the failure is journaled.
func runStage(ctx context.Context, stg Stage, env *Env) (out any, err error) {
	defer func() {
		if p := recover(); p != nil {
			env.Log.Error("stage panicked", "panic", p, "stack", string(debug.Stack()))
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return stg.Run(ctx, env)
}

// markLater journals every later stage that has state other than pending or stale as stale.
func (s *session) markLater(i int, st Status, reason string) error {
	for _, later := range s.r.Stages[i+1:] {
		ls := st.Stage(later.Name())
		if ls.State == StatePending || ls.State == StateStale {
			continue
		}
		if _, err := s.j.Append(Entry{Kind: EntryStageStale, Run: s.run, Stage: later.Name(),
			Attempt: ls.Attempt, Reason: reason}); err != nil {
			return err
		}
		s.r.emit(Event{Kind: StageStale, Stage: later.Name(), Message: reason})
	}
	return nil
}

// failed journals a stage failure and returns the *StageError. After Ctrl-C ctx is cancelled;
// the journal write takes no context, so cancellation cannot stop the record of it.
func (s *session) failed(ctx context.Context, name string, attempt int, fp string, cause error) error {
	remedy := s.r.scrubText(remedyOf(cause))
	text := s.r.scrubText(cause.Error())
	if ctx.Err() != nil {
		text = interruptedPrefix + ": " + text
		cause = fmt.Errorf("%s: %w", interruptedPrefix, errors.Join(cause, ctx.Err()))
		if remedy == "" {
			remedy = "run `bootstrap run` again: it resumes after the last journaled step"
		}
	}
	if remedy == "" {
		remedy = fmt.Sprintf("fix the cause above, then run `bootstrap run` again (finished steps are kept) "+
			"or `bootstrap replay %s` to redo the stage", name)
	}
	if _, err := s.j.Append(Entry{Kind: EntryStageFailed, Run: s.run, Stage: name, Attempt: attempt,
		Fingerprint: fp, Error: text, Remedy: remedy}); err != nil {
		s.r.log().Warn("journal stage-failed", "stage", name, "err", err)
	}
	s.r.emit(Event{Kind: StageFailed, Stage: name, Message: text})
	return &StageError{Stage: name, Err: cause, remedy: remedy}
}
