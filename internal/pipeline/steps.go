package pipeline

import (
	"encoding/json"
	"fmt"
	"sync"
)

// stepBook implements Steps for one execution of one stage: it knows the steps journaled in the
// same attempt with the same fingerprint and journals new ones.
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
}

func newStepBook(j *Journal, run int64, stage string, attempt int, fp string, emit Sink,
	scrub func([]byte) []byte) *stepBook {
	b := &stepBook{j: j, run: run, stage: stage, attempt: attempt, fingerprint: fp, emit: emit,
		scrub: scrub, done: map[string]json.RawMessage{}}
	j.each(func(e *Entry) {
		if e.Kind == EntryStepDone && e.Stage == stage && e.Attempt == attempt && e.Fingerprint == fp {
			b.done[e.Step] = e.Data
		}
	})
	return b
}

// Done implements Steps.
func (b *stepBook) Done(key string, out any) bool {
	b.mu.Lock()
	data, ok := b.done[key]
	b.mu.Unlock()
	if !ok {
		return false
	}
	if out != nil && len(data) > 0 {
		if err := json.Unmarshal(data, out); err != nil {
			// Recorded by another version in another shape: doing the step again is the safe answer.
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
