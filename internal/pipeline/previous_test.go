package pipeline_test

import (
	"context"
	"errors"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
)

// TestStepsPrevious: a fresh attempt sees the latest record of each step from earlier attempts
// (finished or not, any fingerprint) through Previous but not through Done; a replay sees none.
func TestStepsPrevious(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	type seen struct {
		done, prev bool
		data       map[string]string
	}
	var got map[string]seen
	f.b.hook = func(env *pipeline.Env) {
		got = map[string]seen{}
		for _, k := range []string{"s1", "s2", "s3"} {
			var s seen
			s.done = env.Steps.Done(k, nil)
			s.prev = env.Steps.Previous(k, &s.data)
			got[k] = s
		}
	}
	if err := f.r.Run(ctx, pipeline.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	for k, s := range got {
		if s.done || s.prev {
			t.Errorf("first attempt: %s done %t previous %t, want neither", k, s.done, s.prev)
		}
	}

	// Attempt 2 (new inputs) fails after s1: its s1 is the latest record for attempt 3.
	f.b.input, f.b.fail, f.b.failAt = "2", errors.New("boom"), "s2"
	f.b.steps = []string{"s1", "s2", "s3"}
	if err := f.r.Run(ctx, pipeline.RunOptions{}); err == nil {
		t.Fatal("want attempt 2 to fail")
	}
	for k, s := range got {
		if s.done || !s.prev || s.data["k"] != k {
			t.Errorf("attempt 2: %s done %t previous %t %v; want previous only, with its data", k, s.done, s.prev, s.data)
		}
	}

	// Attempt 3 (new inputs again): s1 comes from attempt 2 (which failed), s2 and s3 from 1.
	f.b.input, f.b.fail, f.b.failAt = "3", nil, ""
	f.b.hook = func(env *pipeline.Env) {
		got = map[string]seen{}
		for _, k := range []string{"s1", "s2", "s3", "never"} {
			var s seen
			s.done = env.Steps.Done(k, nil)
			s.prev = env.Steps.Previous(k, nil)
			got[k] = s
		}
		// Record marks the current attempt only.
		if err := env.Steps.Record("s1", map[string]string{"k": "again"}); err != nil {
			t.Error(err)
		}
		if env.Steps.Previous("s1", nil) != got["s1"].prev || !env.Steps.Done("s1", nil) {
			t.Error("Record changed Previous or did not reach Done")
		}
	}
	if err := f.r.Run(ctx, pipeline.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	for k, s := range got {
		if want := k != "never"; s.prev != want || s.done {
			t.Errorf("attempt 3: %s done %t previous %t, want previous %t", k, s.done, s.prev, want)
		}
	}

	// A replay starts afresh: nothing from earlier attempts.
	if err := f.r.Replay(ctx, "b", nil); err != nil {
		t.Fatal(err)
	}
	for k, s := range got {
		if s.prev || s.done {
			t.Errorf("replay: %s done %t previous %t, want neither", k, s.done, s.prev)
		}
	}
	if st := f.status(t).Stage("b"); st.Attempt != 4 {
		t.Errorf("b at attempt %d, want 4", st.Attempt)
	}
}
