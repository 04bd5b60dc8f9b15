package pipeline

import (
	"encoding/json"
	"fmt"
	"sync"
)

// stepBook implements Steps for one execution of one stage: it knows the steps journaled in the
// same attempt with the same fingerprint, the latest record of each step in earlier attempts
// (unless the execution is a replay), and journals new ones.
type stepBook struct {
	j           *Journal
	run         int64
	stage       string
	attempt     int
	fingerprint string
	emit        Sink
	scrub       func([]byte) []byte

	mu   sync.Mutex
	done map[string]json.RawMessage
	prev map[string]json.RawMessage // latest record per key in earlier attempts (read-only)
}

// newStepBook reads the stage's journaled steps: those of this attempt (with fingerprint fp)
// for Done and, unless fresh (a replay), the latest of each key in earlier attempts for Previous.
func newStepBook(j *Journal, run int64, stage string, attempt int, fp string, fresh bool, emit Sink,
	scrub func([]byte) []byte) *stepBook {
	b := &stepBook{j: j, run: run, stage: stage, attempt: attempt, fingerprint: fp, emit: emit,
		scrub: scrub, done: map[string]json.RawMessage{}, prev: map[string]json.RawMessage{}}
	j.each(func(e *Entry) {
		if e.Kind != EntryStepDone || e.Stage != stage {
			return
		}
		switch {
		case e.Attempt == attempt && e.Fingerprint == fp:
			b.done[e.Step] = e.Data
		case e.Attempt < attempt && !fresh:
			b.prev[e.Step] = e.Data // later entries overwrite: the latest record wins
		}
	})
	return b
}

// Done implements Steps.
func (b *stepBook) Done(key string, out any) bool {
	b.mu.Lock()
	data, ok := b.done[key]
	b.mu.Unlock()
	return ok && decodeStep(data, out)
}

// Previous implements Steps.
func (b *stepBook) Previous(key string, out any) bool {
	data, ok := b.prev[key]
	return ok && decodeStep(data, out)
}

// decodeStep decodes journaled step data into out (nil: nothing to decode). Data recorded by
// another version in another shape reports false: doing the step again is the safe answer.
func decodeStep(data json.RawMessage, out any) bool {
	if out != nil && len(data) > 0 {
		if err := json.Unmarshal(data, out); err != nil {
			return false
		}
	}
	return true
}

// Record implements Steps.
func (b *stepBook) Record(key string, data any) error {
	if key == "" {
		return fmt.Errorf("record step of %s: empty step key", b.stage)
	}
	raw, err := marshalData(data, b.scrub)
	if err != nil {
		return fmt.Errorf("record step %s/%s: %w", b.stage, key, err)
	}
	// A key that holds a secret is journaled scrubbed: safe, but that step cannot be resumed.
	jkey := key
	if b.scrub != nil {
		if q, err := json.Marshal(key); err == nil {
			_ = json.Unmarshal(b.scrub(q), &jkey)
		}
	}
	if _, err := b.j.Append(Entry{Kind: EntryStepDone, Run: b.run, Stage: b.stage, Step: jkey,
		Attempt: b.attempt, Fingerprint: b.fingerprint, Data: raw}); err != nil {
		return err
	}
	b.mu.Lock()
	b.done[key] = raw
	n := len(b.done)
	b.mu.Unlock()
	b.emit(Event{Kind: StepDone, Stage: b.stage, Step: jkey, Node: stepNode(jkey), Done: int64(n)})
	return nil
}

// marshalData encodes stage-provided data for the journal; nil stays empty.
func marshalData(v any, scrub func([]byte) []byte) (json.RawMessage, error) {
	if v == nil {
		return nil, nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if string(raw) == "null" {
		return nil, nil
	}
	if scrub != nil {
		raw = scrub(raw)
		if !json.Valid(raw) {
			return nil, fmt.Errorf("scrub produced invalid JSON")
		}
	}
	return raw, nil
}
