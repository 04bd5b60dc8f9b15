package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
)

// Example shows the wiring cmd/ does for `bootstrap run`: a runner over the stages, events to a
// renderer, *LockedError mapped to exit code 4, and the folded status afterwards.
func Example() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	r := &pipeline.Runner{
		WorkDir: dir,
		Command: "bootstrap run -f site.yaml",
		Stages:  []pipeline.Stage{&funcStage{name: "preflight"}, &funcStage{name: "mirror"}},
		Sink:    func(e pipeline.Event) { fmt.Println(e.Kind, e.Stage) }, // progress.New(os.Stderr, progress.Auto)
	}
	err := r.Run(context.Background(), pipeline.RunOptions{})
	var locked *pipeline.LockedError
	if errors.As(err, &locked) {
		fmt.Println("exit 4:", locked.Holder)
	}
	st, _ := r.Status()
	for _, s := range st.Stages {
		fmt.Println(s.Name, s.State)
	}
	// Output:
	// stage-started preflight
	// stage-succeeded preflight
	// stage-started mirror
	// stage-succeeded mirror
	// preflight succeeded
	// mirror succeeded
}
