package progress

import (
	"fmt"
	"io"
	"sort"
	"sync"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
	"github.com/bootstrap-dev/bootstrap/internal/units"
)

// PlainOptions tune the plain renderer; zero values take the defaults.
type PlainOptions struct {
	// Interval is the least time between two progress lines of one stage (default 2 s: a field
	// engineer watching a log sees bytes, rate and time left move at least that often).
	Interval time.Duration
	// Heartbeat is the most time a running stage stays silent (default 10 s).
	Heartbeat time.Duration
}

// PlainRenderer writes timestamped lines, for logs and pipes: every stage transition at once,
// progress at most every Interval per stage, and a heartbeat line when a running stage has
// printed nothing for Heartbeat.
type PlainRenderer struct {
	w    io.Writer
	opts PlainOptions

	mu     sync.Mutex
	stages map[string]*plainStage
	stop   chan struct{}
	done   chan struct{} // closed when loop returns; nil when no loop runs (tests)
}

type plainStage struct {
	started   time.Time
	printed   time.Time      // last line of this stage
	last      pipeline.Event // latest progress (or step count) event
	pending   bool           // last not printed yet
	shownAt   time.Time      // time of the last printed progress, for the rate
	shownCurr int64
	shownPart int64
	steps     int64
}

// NewPlain returns a plain renderer writing to w; its heartbeat runs until Close.
func NewPlain(w io.Writer, opts PlainOptions) *PlainRenderer {
	r := newPlain(w, opts)
	r.done = make(chan struct{})
	go r.loop()
	return r
}

func newPlain(w io.Writer, opts PlainOptions) *PlainRenderer {
	if opts.Interval <= 0 {
		opts.Interval = 2 * time.Second
	}
	if opts.Heartbeat <= 0 {
		opts.Heartbeat = 10 * time.Second
	}
	return &PlainRenderer{w: w, opts: opts, stages: map[string]*plainStage{}, stop: make(chan struct{})}
}

func (r *PlainRenderer) loop() {
	defer close(r.done)
	// Checked twice per Interval: a line is never more than half an Interval late, whatever the
	// options (tests call tick with their own clock instead).
	t := time.NewTicker(max(r.opts.Interval/2, 50*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case now := <-t.C:
			r.tick(now)
		}
	}
}

// Close stops the heartbeat and prints what progress is still pending.
func (r *PlainRenderer) Close() error {
	select {
	case <-r.stop:
		return nil
	default:
	}
	close(r.stop)
	if r.done != nil {
		<-r.done
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	for name, st := range r.stages {
		if st.pending {
			r.showProgress(name, st, now, "")
		}
	}
	return nil
}

func (r *PlainRenderer) line(t time.Time, stage, text string) {
	if stage == "" {
		stage = "-"
	}
	fmt.Fprintf(r.w, "%s %-10s %s\n", t.UTC().Format(time.RFC3339), stage, text)
}

// Handle renders one event.
func (r *PlainRenderer) Handle(e pipeline.Event) {
	now := stamp(e)
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.stages[e.Stage]
	if st == nil && (e.Kind == pipeline.StageStarted || e.Kind == pipeline.Progress || e.Kind == pipeline.StepDone) {
		st = &plainStage{started: now, printed: now}
		r.stages[e.Stage] = st
	}
	switch e.Kind {
	case pipeline.Progress:
		st.last, st.pending = e, true
		if now.Sub(st.printed) >= r.opts.Interval {
			r.showProgress(e.Stage, st, now, "")
		}
		return
	case pipeline.StepDone:
		st.steps++
		if e.Node != "" {
			r.line(now, e.Stage, describe(e))
			st.printed = now
			return
		}
		if st.last.Kind != pipeline.Progress {
			st.last, st.pending = e, true
		}
		if now.Sub(st.printed) >= r.opts.Interval {
			r.showProgress(e.Stage, st, now, "")
		}
		return
	case pipeline.StageStarted:
		*st = plainStage{started: now, printed: now}
	case pipeline.StageSucceeded, pipeline.StageFailed:
		if st != nil && st.pending {
			r.showProgress(e.Stage, st, now, "")
		}
		defer delete(r.stages, e.Stage)
	case pipeline.StageSkipped, pipeline.StageStale:
		defer delete(r.stages, e.Stage)
	}
	r.line(now, e.Stage, describe(e))
	if st != nil {
		st.printed = now
	}
}

// showProgress prints a stage's latest progress with the rate since the previous such line and,
// when the total is known, the time left at that rate.
func (r *PlainRenderer) showProgress(stage string, st *plainStage, now time.Time, prefix string) {
	e := st.last
	var text string
	if e.Kind == pipeline.Progress {
		text = progressText(e)
		if !st.shownAt.IsZero() && e.Current >= st.shownCurr && e.Unit != pipeline.UnitPhases {
			if dt := now.Sub(st.shownAt).Seconds(); dt > 0 {
				rate := float64(e.Current-st.shownCurr) / dt
				if e.Unit == "bytes" {
					text += fmt.Sprintf(", %s/s", units.Bytes(int64(rate)))
				} else if r := countRate(rate, e.Unit); r != "" {
					text += ", " + r
				}
				// Time left: the later of bytes and parts (blobs): the largest blobs go first, so
				// bytes alone end too early while many small blobs remain.
				eta := etaOf(e.Current, e.Total, rate)
				if e.PartsTotal > 0 && e.Parts >= st.shownPart {
					eta = max(eta, etaOf(e.Parts, e.PartsTotal, float64(e.Parts-st.shownPart)/dt))
				}
				if eta > 0 {
					text += ", ETA " + eta.Round(time.Second).String()
				}
			}
		}
		st.shownAt, st.shownCurr, st.shownPart = now, e.Current, e.Parts
	} else {
		text = fmt.Sprintf("%d steps done", st.steps)
	}
	r.line(now, stage, prefix+text)
	st.printed, st.pending = now, false
}

// tick prints pending progress that waited out the interval, and heartbeats for silent stages.
func (r *PlainRenderer) tick(now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	names := make([]string, 0, len(r.stages))
	for name := range r.stages {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		st := r.stages[name]
		since := now.Sub(st.printed)
		switch {
		case st.pending && since >= r.opts.Interval:
			r.showProgress(name, st, now, "")
		case since >= r.opts.Heartbeat && st.last.Kind != "":
			r.showProgress(name, st, now, fmt.Sprintf("still running (%s): ", now.Sub(st.started).Round(time.Second)))
		case since >= r.opts.Heartbeat:
			r.line(now, name, fmt.Sprintf("still running (%s)", now.Sub(st.started).Round(time.Second)))
			st.printed = now
		}
	}
}

// countRate is a rate of items a person can read: "12 images/s", "4 nodes/min", "" for none.
func countRate(perSec float64, unit string) string {
	switch {
	case perSec <= 0:
		return ""
	case perSec >= 1:
		return fmt.Sprintf("%.0f %s/s", perSec, unit)
	case perSec*60 >= 1:
		return fmt.Sprintf("%.0f %s/min", perSec*60, unit)
	}
	return ""
}
