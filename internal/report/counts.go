package report

import (
	"fmt"

	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
)

// Step counts come from one place, the attempt's journaled steps: a step is one key, however
// often it was recorded (a resumed execution may record a step again). The stages table, the
// summary and each attempt's heading use these, so they agree.

// stepsOf is the number of distinct steps of an attempt.
func stepsOf(a pipeline.AttemptRecord) int {
	seen := map[string]bool{}
	for _, s := range a.Steps {
		seen[s.Key] = true
	}
	return len(seen)
}

// stepsText is an attempt's heading count: "12 steps", or "12 steps (14 records: 2 recorded again
// again, as a resumed execution or a re-check does)".
func stepsText(a pipeline.AttemptRecord) string {
	n, recs := stepsOf(a), len(a.Steps)
	s := fmt.Sprintf("%d steps", n)
	if n == 1 {
		s = "1 step"
	}
	if recs > n {
		s += fmt.Sprintf(" (%d records: %d recorded again, as a resumed execution or a re-check does)", recs, recs-n)
	}
	return s
}

// countStepsOnce sets each stage's step count from its latest attempt, counted as stepsOf does.
func countStepsOnce(stages []pipeline.StageStatus, h pipeline.History) {
	for i := range stages {
		if a := latestAttempt(h, stages[i].Name); a != nil {
			stages[i].Steps = stepsOf(*a)
		}
	}
}

func latestAttempt(h pipeline.History, stage string) *pipeline.AttemptRecord {
	for i := len(h.Attempts) - 1; i >= 0; i-- {
		if h.Attempts[i].Stage == stage && h.Attempts[i].Latest {
			return &h.Attempts[i]
		}
	}
	return nil
}
