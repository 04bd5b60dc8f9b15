package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
)

type producedOutput struct {
	URL string `json:"url"`
}

const producedKey pipeline.OutputKey[producedOutput] = "producer"

// producer writes whatever out holds and declares producedOutput as its output type.
type producer struct{ out any }

func (producer) Name() string                                      { return producedKey.Stage() }
func (producer) Summary() string                                   { return "produces" }
func (producer) Inputs(*pipeline.Env) (any, error)                 { return "in", nil }
func (p producer) Run(context.Context, *pipeline.Env) (any, error) { return p.out, nil }
func (producer) OutputContract() pipeline.OutputContract           { return producedKey }

// consumer reads the producer's output through the key.
type consumer struct{ got *producedOutput }

func (consumer) Name() string                      { return "consumer" }
func (consumer) Summary() string                   { return "consumes" }
func (consumer) Inputs(*pipeline.Env) (any, error) { return "in", nil }
func (c consumer) Run(_ context.Context, env *pipeline.Env) (any, error) {
	out, ok, err := producedKey.Read(env)
	if err != nil || !ok {
		return nil, errors.New("no producer output")
	}
	*c.got = out
	return nil, nil
}

// TestOutputKeyTiesWriterAndReader: a reader gets what the writer journaled through the key, and
// a writer returning another type than its key declares fails instead of journaling it.
func TestOutputKeyTiesWriterAndReader(t *testing.T) {
	var got producedOutput
	r := &pipeline.Runner{WorkDir: t.TempDir(), Command: "test",
		Stages: []pipeline.Stage{producer{out: producedOutput{URL: "http://x/agent.iso"}}, consumer{got: &got}}}
	if err := r.Run(context.Background(), pipeline.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	if got.URL != "http://x/agent.iso" {
		t.Fatalf("reader got %+v", got)
	}

	// A private copy of the type with another tag is what the key exists to prevent.
	type drifted struct {
		Location string `json:"location"`
	}
	r = &pipeline.Runner{WorkDir: t.TempDir(), Command: "test",
		Stages: []pipeline.Stage{producer{out: drifted{Location: "http://x/agent.iso"}}, consumer{got: &got}}}
	err := r.Run(context.Background(), pipeline.RunOptions{})
	var se *pipeline.StageError
	if !errors.As(err, &se) || se.Stage != "producer" || !strings.Contains(err.Error(), "not the output type it declares") {
		t.Fatalf("a mistyped output: %v, want the producer stage to fail", err)
	}

	if _, err := producedKey.Decode(json.RawMessage(`{"url":1}`)); err == nil || !strings.Contains(err.Error(), "producer stage's output") {
		t.Fatalf("Decode of a malformed output: %v", err)
	}
	if _, ok, err := producedKey.Read(&pipeline.Env{}); ok || err != nil {
		t.Fatalf("Read without an output: %v %v", ok, err)
	}
}

// TestOutputVersionStampedAndChecked: the runner stamps the key's version into the journaled
// output; a reader of another version refuses it with the versions and a remedy instead of
// decoding zeroed fields; an unstamped output (a journal from before versions) is version 1.
func TestOutputVersionStampedAndChecked(t *testing.T) {
	work := t.TempDir()
	var got producedOutput
	r := &pipeline.Runner{WorkDir: work, Command: "test",
		Stages: []pipeline.Stage{producer{out: producedOutput{URL: "u"}}, consumer{got: &got}}}
	if err := r.Run(context.Background(), pipeline.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	entries, _, err := pipeline.ReadJournal(pipeline.JournalPath(work))
	if err != nil {
		t.Fatal(err)
	}
	raw := pipeline.Fold(entries).Stage("producer").Output
	if string(raw) != `{"outputVersion":1,"url":"u"}` {
		t.Fatalf("journaled output %s, want the version stamped first", raw)
	}

	const v2 pipeline.OutputKey[producedOutput] = "producer@2"
	if v2.Stage() != "producer" || v2.Version() != 2 || producedKey.Version() != 1 {
		t.Fatalf("key %q: stage %q version %d", v2, v2.Stage(), v2.Version())
	}
	_, err = v2.Decode(raw)
	var ve *pipeline.OutputVersionError
	if !errors.As(err, &ve) || ve.Journaled != 1 || ve.Reads != 2 || !strings.Contains(ve.Remedy(), "bootstrap replay producer") {
		t.Fatalf("a v2 reader of a v1 output: %v, want an OutputVersionError with a remedy", err)
	}
	if _, err := producedKey.Decode(json.RawMessage(`{"outputVersion":2,"url":"u"}`)); !errors.As(err, &ve) || ve.Journaled != 2 {
		t.Fatalf("a v1 reader of a v2 output: %v", err)
	}
	if out, err := producedKey.Decode(json.RawMessage(`{"url":"old"}`)); err != nil || out.URL != "old" {
		t.Fatalf("an unstamped output (older journal) read as version 1: %+v %v", out, err)
	}

}
