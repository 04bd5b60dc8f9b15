package progress

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
)

// TTYRenderer draws one progress bar for the stage that reports progress (bytes or items, or
// journaled steps when a stage reports nothing else) and prints stage transitions above it.
type TTYRenderer struct {
	w        io.Writer
	throttle time.Duration

	mu      sync.Mutex
	bar     *progressbar.ProgressBar
	stage   string // stage the bar belongs to
	unit    string // "steps" when the bar counts step-done events
	total   int64
	started map[string]time.Time
}

// NewTTY returns a renderer drawing bars on w, which should be a terminal.
func NewTTY(w io.Writer) *TTYRenderer {
	return &TTYRenderer{w: w, throttle: 100 * time.Millisecond, started: map[string]time.Time{}}
}

// Handle renders one event.
func (r *TTYRenderer) Handle(e pipeline.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch e.Kind {
	case pipeline.Progress:
		unit := e.Unit
		if unit == "" {
			unit = "items"
		}
		r.ensureBar(e.Stage, unit, e.Total)
		r.bar.Describe(r.label(e.Stage, e))
		_ = r.bar.Set64(e.Current)
		return
	case pipeline.StepDone:
		if e.Node != "" {
			r.print(fmt.Sprintf("  %s %s: %s", e.Stage, e.Node, e.Step))
		}
		if r.bar != nil && r.stage == e.Stage && r.unit != "steps" {
			return // the stage draws its own progress
		}
		r.ensureBar(e.Stage, "steps", 0)
		_ = r.bar.Set64(e.Done)
		return
	case pipeline.StageStarted:
		r.started[e.Stage] = stamp(e)
		r.print("▶ " + e.Stage + " " + describe(e))
		return
	case pipeline.StageSucceeded, pipeline.StageFailed:
		if r.stage == e.Stage {
			r.dropBar()
		}
		mark := "✓"
		if e.Kind == pipeline.StageFailed {
			mark = "✗"
		}
		text := describe(e)
		if t, ok := r.started[e.Stage]; ok && e.Kind == pipeline.StageSucceeded {
			text = fmt.Sprintf("succeeded in %s", stamp(e).Sub(t).Round(time.Second))
		}
		delete(r.started, e.Stage)
		r.print(mark + " " + e.Stage + " " + text)
		return
	case pipeline.StageSkipped:
		r.print("↷ " + e.Stage + " " + describe(e))
		return
	case pipeline.Warning, pipeline.Failure:
		r.print("! " + e.Stage + " " + describe(e))
		return
	}
	r.print("  " + e.Stage + " " + describe(e))
}

func (r *TTYRenderer) label(stage string, e pipeline.Event) string {
	label := stage
	if e.DoneTotal > 0 {
		label = fmt.Sprintf("%-9s %d/%d", stage, e.Done, e.DoneTotal)
	}
	if e.PartsTotal > 0 {
		label += fmt.Sprintf(" %s %d/%d", e.PartsUnit, e.Parts, e.PartsTotal)
	}
	return label
}

// ensureBar makes the bar belong to stage and unit, with max total (unknown when 0).
func (r *TTYRenderer) ensureBar(stage, unit string, total int64) {
	if r.bar != nil && (r.stage != stage || r.unit != unit) {
		r.dropBar()
	}
	if r.bar == nil {
		limit := total
		if limit <= 0 {
			limit = -1 // unknown: a spinner with a count
		}
		opts := []progressbar.Option{
			progressbar.OptionSetWriter(r.w),
			progressbar.OptionSetDescription(stage),
			progressbar.OptionSetWidth(30),
			progressbar.OptionThrottle(r.throttle),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionClearOnFinish(),
			progressbar.OptionUseIECUnits(true),
			progressbar.OptionShowCount(),
		}
		if unit == "bytes" {
			opts = append(opts, progressbar.OptionShowBytes(true), progressbar.OptionShowTotalBytes(true))
		} else {
			opts = append(opts, progressbar.OptionShowIts(), progressbar.OptionSetItsString(unit))
		}
		r.bar, r.stage, r.unit, r.total = progressbar.NewOptions64(limit, opts...), stage, unit, total
		return
	}
	if total > 0 && total != r.total {
		r.bar.ChangeMax64(total)
		r.total = total
	}
}

func (r *TTYRenderer) dropBar() {
	if r.bar == nil {
		return
	}
	_ = r.bar.Exit()
	_ = r.bar.Clear()
	r.bar, r.stage, r.unit, r.total = nil, "", "", 0
}

// print writes a line above the bar and draws the bar again.
func (r *TTYRenderer) print(s string) {
	if r.bar != nil {
		_ = r.bar.Clear()
	}
	fmt.Fprintln(r.w, s)
	if r.bar != nil {
		_ = r.bar.RenderBlank()
	}
}

// Close removes the bar.
func (r *TTYRenderer) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.dropBar()
	return nil
}
