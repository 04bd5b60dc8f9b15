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
func (producer) AcceptsOutput(out any) bool                        { return producedKey.Accepts(out) }

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
