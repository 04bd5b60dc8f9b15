package pipeline

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// OutputKey names a stage's journaled output together with its Go type T and the version of T's
// JSON form: the one contract between the stage that writes the output and everything that reads
// it (later stages through Read, the report and status through Decode). Declare one per stage,
// beside the stage; never re-declare a private copy of T in a reader: renaming a JSON tag would
// silently zero it. The key's value is the writing stage's name (its Name()), followed by "@N"
// from version 2 on, so a key is a constant:
//
//	const ISOOutputKey pipeline.OutputKey[ISOOutput] = "iso"    // version 1
//	const ISOOutputKey pipeline.OutputKey[ISOOutput] = "iso@2"  // after an incompatible change
//
// Bump the version when a change of T would make an older journal's output decode into something
// wrong (a field renamed, a meaning changed); adding a field is compatible. The runner stamps the
// version into the journaled output ("outputVersion", the first field), and Decode refuses an
// output of another version with an *OutputVersionError (a journal written before versions, with
// no stamp, is version 1), so a newer bootstrap resuming an older run never reads a zeroed field.
type OutputKey[T any] string

// Stage is the name of the stage that writes the output.
func (k OutputKey[T]) Stage() string {
	name, _, _ := strings.Cut(string(k), "@")
	return name
}

// Version is the version of T's JSON form (1 unless the key says "@N").
func (k OutputKey[T]) Version() int {
	_, v, ok := strings.Cut(string(k), "@")
	if !ok {
		return 1
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		panic(fmt.Sprintf("pipeline: output key %q: the version after @ must be a number from 1", string(k)))
	}
	return n
}

// Read decodes the stage's output from env (earlier stages' outputs; during Verify also the
// stage's own); ok is false when the stage has none.
func (k OutputKey[T]) Read(env *Env) (out T, ok bool, err error) {
	raw := env.Outputs[k.Stage()]
	if len(raw) == 0 {
		return out, false, nil
	}
	out, err = k.Decode(raw)
	return out, err == nil, err
}

// Decode decodes a journaled output of the stage (a StageStatus's or an Attempt's Output). An
// output stamped with another version than the key's is an *OutputVersionError.
func (k OutputKey[T]) Decode(raw json.RawMessage) (T, error) {
	var out T
	if got := OutputVersionOf(raw); got != k.Version() {
		return out, &OutputVersionError{Stage: k.Stage(), Journaled: got, Reads: k.Version()}
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return out, fmt.Errorf("the %s stage's output: %w", k.Stage(), err)
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

// OutputContract is what an OutputKey tells the runner about a stage's output.
type OutputContract interface {
	Stage() string
	Version() int
	Accepts(out any) bool
}

// OutputTyped is implemented by stages that declare their output (with an OutputKey): the runner
// fails such a stage when Run returns an output of another type, and stamps the output's version,
// so what a stage journals is what its readers decode.
type OutputTyped interface {
	OutputContract() OutputContract
}

// OutputVersionError is a journaled output whose version is not the one this bootstrap reads:
// the journal was written by a bootstrap whose output type for the stage was incompatible.
type OutputVersionError struct {
	Stage     string
	Journaled int // the version in the journal
	Reads     int // the version this bootstrap reads
}

func (e *OutputVersionError) Error() string {
	return fmt.Sprintf("the %s stage's journaled output is version %d; this bootstrap reads version %d", e.Stage, e.Journaled, e.Reads)
}

// Remedy implements Remedier.
func (e *OutputVersionError) Remedy() string {
	return fmt.Sprintf("run the bootstrap that wrote this journal, or `bootstrap replay %s` to write the stage's output again with this one", e.Stage)
}

// versionField opens every stamped output.
const versionField = `{"outputVersion":`

// OutputVersionOf returns the version stamped in a journaled output (1 when unstamped).
func OutputVersionOf(raw json.RawMessage) int {
	if !bytes.HasPrefix(raw, []byte(versionField)) {
		return 1
	}
	var v struct {
		OutputVersion int `json:"outputVersion"`
	}
	if json.Unmarshal(raw, &v) != nil || v.OutputVersion < 1 {
		return 0 // stamped but unreadable: matches no key
	}
	return v.OutputVersion
}

// stampVersion puts "outputVersion": v first in a JSON object's fields; other JSON (null, an
// array, a string) is left as it is.
func stampVersion(raw json.RawMessage, v int) json.RawMessage {
	raw = unstamped(raw)
	if len(raw) < 2 || raw[0] != '{' {
		return raw
	}
	out := append([]byte(versionField), strconv.Itoa(v)...)
	if rest := bytes.TrimSpace(raw[1:]); len(rest) > 0 && rest[0] != '}' {
		out = append(out, ',')
	}
	return append(out, raw[1:]...)
}

// unstamped returns raw without its version stamp, for comparing outputs across versions.
func unstamped(raw json.RawMessage) json.RawMessage {
	if !bytes.HasPrefix(raw, []byte(versionField)) {
		return raw
	}
	i := len(versionField)
	for i < len(raw) && raw[i] >= '0' && raw[i] <= '9' {
		i++
	}
	if i < len(raw) && raw[i] == ',' {
		return append([]byte{'{'}, raw[i+1:]...)
	}
	return append([]byte{'{'}, raw[i:]...)
}
