package pipeline

import (
	"encoding/json"
	"fmt"
)

// OutputKey names a stage's journaled output together with its Go type T: the one contract between
// the stage that writes the output and everything that reads it (later stages through Read, the
// report and status through Decode). Declare one per stage, beside the stage; never re-declare a
// private copy of T in a reader: renaming a JSON tag would silently zero it. The key's value is
// the writing stage's name (its Name()), so a key is a constant:
//
//	const ISOOutputKey pipeline.OutputKey[ISOOutput] = "iso"
type OutputKey[T any] string

// Stage is the name of the stage that writes the output.
func (k OutputKey[T]) Stage() string { return string(k) }

// Read decodes the stage's output from env (earlier stages' outputs; during Verify also the
// stage's own); ok is false when the stage has none.
func (k OutputKey[T]) Read(env *Env) (out T, ok bool, err error) {
	raw := env.Outputs[string(k)]
	if len(raw) == 0 {
		return out, false, nil
	}
	out, err = k.Decode(raw)
	return out, err == nil, err
}

// Decode decodes a journaled output of the stage (a StageStatus's or an Attempt's Output).
func (k OutputKey[T]) Decode(raw json.RawMessage) (T, error) {
	var out T
	if err := json.Unmarshal(raw, &out); err != nil {
		return out, fmt.Errorf("the %s stage's output: %w", string(k), err)
	}
	return out, nil
}

// Accepts reports whether out is what the stage declares it writes (a T or a *T; nil, the output
// of a failure, too).
func (k OutputKey[T]) Accepts(out any) bool {
	switch out.(type) {
	case nil, T, *T:
		return true
	}
	return false
}

// OutputTyped is implemented by stages that declare their output's type (with an OutputKey): the
// runner fails such a stage when Run returns an output of another type, so what a stage journals
// is what its readers decode.
type OutputTyped interface {
	AcceptsOutput(out any) bool
}
