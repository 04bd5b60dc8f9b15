package progress

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
	"github.com/bootstrap-dev/bootstrap/internal/units"
)

// TTYRenderer keeps a live region at the bottom of the terminal: one line per active stage (its
// progress, rate, time left, or its latest message), redrawn in place. Everything else (stage
// transitions, warnings, node steps, log lines) is printed above the region, never inside it.
// A finished stage leaves the region and prints one final line. Nothing draws on its own, but a
// resized terminal (SIGWINCH) has the region drawn again at once, cut to the new width.
type TTYRenderer struct {
	w        io.Writer
	throttle time.Duration
	now      func() time.Time
	// cols is the terminal's width now (0: unknown), asked of the terminal's file descriptor at
	// every draw: a live line longer than it would wrap, and the region would no longer be erased
	// by moving up one row per line.
	cols  func() int
	winch chan os.Signal // SIGWINCH while the renderer is open (nil: not a terminal)

	mu     sync.Mutex
	active []*ttyStage // in start order
	drawn  []string    // the region's lines on screen
	last   time.Time   // last redraw
}

type ttyStage struct {
	name    string
	started time.Time
	last    pipeline.Event // latest progress (or step) event
	msg     string         // latest info line
	steps   int64
	// rate samples for the time left: bytes and parts (blobs) seen at first sight.
	t0           time.Time
	cur0, parts0 int64
	bar          *progressbar.ProgressBar // the bar of a progress with a total, drawn by progressbar/v3
	barAt        int64                    // the count it was last set to
}

// barWidth is the width of the bar itself, between its brackets.
const barWidth = 12

// barOf returns the stage's bar graphic for e ("  80% [=========>  ]"): progressbar/v3 renders
// it into a string (its own writer discarded, its time prediction off: the line says the time
// left, from bytes and blobs), and the live line places it.
func (s *ttyStage) barOf(e pipeline.Event) string {
	if e.Total <= 0 {
		return ""
	}
	if s.bar != nil && (e.Current < s.barAt || s.bar.GetMax64() != e.Total) {
		s.bar = nil // a new count (another attempt, a new total): a new bar, never one that lags
	}
	s.barAt = e.Current
	if s.bar == nil {
		s.bar = progressbar.NewOptions64(e.Total, progressbar.OptionSetWriter(io.Discard), progressbar.OptionSetWidth(barWidth),
			progressbar.OptionSetPredictTime(false), progressbar.OptionSetElapsedTime(false), progressbar.OptionThrottle(0),
			progressbar.OptionUseANSICodes(false), progressbar.OptionEnableColorCodes(false), progressbar.OptionSetRenderBlankState(true),
			progressbar.OptionSetTheme(progressbar.Theme{Saucer: "=", SaucerHead: ">", SaucerPadding: " ", BarStart: "[", BarEnd: "]"}))
	}
	_ = s.bar.Set64(min(e.Current, e.Total))
	return strings.TrimSpace(strings.TrimLeft(s.bar.String(), "\r"))
}

// NewTTY returns a renderer drawing on w, which should be a terminal (or a writer in front of
// one, such as the secret scrubber, seen through by its Unwrap method). The width is the
// terminal's, asked at every draw; a SIGWINCH draws the region again at the new width.
func NewTTY(w io.Writer) *TTYRenderer {
	r := &TTYRenderer{w: w, throttle: 100 * time.Millisecond, now: time.Now, cols: func() int { return 0 }}
	f := terminalFile(w)
	if f == nil {
		return r
	}
	r.cols = func() int {
		c, _, err := term.GetSize(int(f.Fd()))
		if err != nil {
			return 0
		}
		return c
	}
	r.winch = make(chan os.Signal, 1)
	signal.Notify(r.winch, syscall.SIGWINCH)
	go func(c chan os.Signal) {
		for range c {
			r.mu.Lock()
			if len(r.drawn) > 0 {
				r.redraw(true)
			}
			r.mu.Unlock()
		}
	}(r.winch)
	return r
}

// terminalFile is the terminal under w (through writers that Unwrap), or nil.
func terminalFile(w io.Writer) *os.File {
	for {
		if u, ok := w.(interface{ Unwrap() io.Writer }); ok {
			w = u.Unwrap()
			continue
		}
		if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			return f
		}
		return nil
	}
}

// rowsOf is how many rows lines take on a terminal cols wide: each was cut to the width it was
// drawn at, but a terminal made narrower since re-wraps (reflows) what it shows, so a line may
// now take several rows. cols <= 0: one row each.
func rowsOf(lines []string, cols int) int {
	n := 0
	for _, l := range lines {
		w := utf8.RuneCountInString(l)
		if cols <= 0 || w <= cols {
			n++
			continue
		}
		n += (w + cols - 1) / cols
	}
	return n
}

// fit shortens body so that body+suffix fits in cols-1 columns (the last column left free: some
// terminals wrap on writing it), marking the cut with "…"; the suffix (the elapsed time) stays.
func fit(body, suffix string, cols int) string {
	room := cols - 1 - utf8.RuneCountInString(suffix)
	if cols <= 0 || utf8.RuneCountInString(body) <= room {
		return body + suffix
	}
	if room < 2 {
		return string([]rune(body + suffix)[:max(cols-1, 0)])
	}
	return string([]rune(body)[:room-1]) + "…" + suffix
}

func (r *TTYRenderer) stage(e pipeline.Event) *ttyStage {
	for _, s := range r.active {
		if s.name == e.Stage {
			return s
		}
	}
	s := &ttyStage{name: e.Stage, started: stamp(e)}
	r.active = append(r.active, s)
	return s
}

func (r *TTYRenderer) finish(name string) *ttyStage {
	for i, s := range r.active {
		if s.name == name {
			r.active = append(r.active[:i], r.active[i+1:]...)
			return s
		}
	}
	return nil
}

// Handle renders one event.
func (r *TTYRenderer) Handle(e pipeline.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch e.Kind {
	case pipeline.Progress:
		s := r.stage(e)
		if s.t0.IsZero() {
			s.t0, s.cur0, s.parts0 = stamp(e), e.Current, e.Parts
		}
		s.last = e
		r.redraw(false)
		return
	case pipeline.StepDone:
		s := r.stage(e)
		s.steps++
		if e.Node != "" {
			r.print(fmt.Sprintf("  %s %s: %s", e.Stage, e.Node, e.Step))
			return
		}
		r.redraw(false)
		return
	case pipeline.StageStarted:
		r.stage(e).started = stamp(e)
		r.print("▶ " + e.Stage + " " + describe(e))
		return
	case pipeline.StageSucceeded, pipeline.StageFailed:
		s := r.finish(e.Stage)
		mark, text := "✓", describe(e)
		if e.Kind == pipeline.StageFailed {
			mark = "✗"
		} else if s != nil {
			text = "succeeded in " + stamp(e).Sub(s.started).Round(time.Second).String()
		}
		r.print(mark + " " + e.Stage + " " + text)
		return
	case pipeline.StageSkipped:
		r.finish(e.Stage)
		r.print("↷ " + e.Stage + " " + describe(e))
		return
	case pipeline.StageStale:
		r.print("  " + e.Stage + " " + describe(e))
		return
	case pipeline.Warning, pipeline.Failure:
		r.print("! " + e.Stage + " " + describe(e))
		return
	}
	// Info: a log line, printed above; the stage's live line shows it too while it has nothing
	// better (the installer's "Still waiting..." while install runs).
	if e.Stage != "" {
		for _, s := range r.active {
			if s.name == e.Stage {
				s.msg = firstLineOf(e.Message)
			}
		}
	}
	r.print("  " + e.Stage + " " + describe(e))
}

// line is a stage's live line: "mirror   1.2 GiB / 3.0 GiB (40%)  images 3/40  blobs 130/641
// 25.6 MiB/s  ETA 1m10s  [42s]".
func (r *TTYRenderer) line(s *ttyStage, now time.Time, cols int) string {
	elapsed := now.Sub(s.started).Round(time.Second)
	e := s.last
	var b strings.Builder
	fmt.Fprintf(&b, "%-9s ", s.name)
	switch {
	case e.Kind == pipeline.Progress && e.Unit == pipeline.UnitPhases:
		// "phase 3/6 installing  nodes 2/5 done  2 Done · 1 Rebooting (gpu-1)"
		fmt.Fprintf(&b, "phase %d/%d %s", e.Current, e.Total, e.Step)
		if e.DoneTotal > 0 {
			fmt.Fprintf(&b, "  nodes %d/%d done", e.Done, e.DoneTotal)
		}
		if e.Message != "" {
			b.WriteString("  " + e.Message)
		}
	case e.Kind == pipeline.Progress:
		if bar := s.barOf(e); bar != "" {
			b.WriteString(bar + "  ")
		}
		if e.Unit == "bytes" {
			b.WriteString(units.Bytes(e.Current))
			if e.Total > 0 {
				fmt.Fprintf(&b, " / %s", units.Bytes(e.Total))
			}
		} else {
			fmt.Fprintf(&b, "%d", e.Current)
			if e.Total > 0 {
				fmt.Fprintf(&b, "/%d", e.Total)
			}
			b.WriteString(" " + or(e.Unit, "items"))
		}
		if e.DoneTotal > 0 {
			fmt.Fprintf(&b, "  done %d/%d", e.Done, e.DoneTotal)
		}
		if e.PartsTotal > 0 {
			fmt.Fprintf(&b, "  %s %d/%d", e.PartsUnit, e.Parts, e.PartsTotal)
		}
		if dt := stamp(e).Sub(s.t0).Seconds(); dt >= 1 {
			rate := float64(e.Current-s.cur0) / dt
			if e.Unit == "bytes" && rate > 0 {
				fmt.Fprintf(&b, "  %s/s", units.Bytes(int64(rate)))
			}
			// Time left: the later of what bytes and parts say. The largest blobs go first,
			// so bytes alone promise too early an end while many small blobs remain.
			eta := etaOf(e.Current, e.Total, rate)
			if e.PartsTotal > 0 {
				eta = max(eta, etaOf(e.Parts, e.PartsTotal, float64(e.Parts-s.parts0)/dt))
			}
			if eta > 0 {
				fmt.Fprintf(&b, "  ETA %s", eta.Round(time.Second))
			}
		}
	case s.steps > 0:
		fmt.Fprintf(&b, "%d steps done", s.steps)
		if s.msg != "" {
			b.WriteString("  " + s.msg)
		}
	default:
		b.WriteString(or(s.msg, "working"))
	}
	return fit(b.String(), fmt.Sprintf("  [%s]", elapsed), cols)
}

// etaOf is how long the rest of total takes at rate; 0 when it cannot be told.
func etaOf(done, total int64, rate float64) time.Duration {
	if rate <= 0 || total <= done {
		return 0
	}
	return time.Duration(float64(total-done) / rate * float64(time.Second))
}

// eraseSeq moves to where the region began and clears from there to the end of the screen.
func (r *TTYRenderer) eraseSeq(cols int) string {
	if len(r.drawn) == 0 {
		return ""
	}
	return fmt.Sprintf("\r\x1b[%dA\x1b[J", rowsOf(r.drawn, cols))
}

// erase removes the region from the screen, leaving the cursor where it began.
func (r *TTYRenderer) erase() {
	if len(r.drawn) > 0 {
		_, _ = io.WriteString(r.w, r.eraseSeq(r.cols()))
		r.drawn = nil
	}
}

// redraw draws the region again (at most every throttle unless forced).
func (r *TTYRenderer) redraw(force bool) {
	now := r.now()
	if !force && len(r.drawn) > 0 && now.Sub(r.last) < r.throttle {
		return
	}
	cols := r.cols()
	var b strings.Builder
	b.WriteString(r.eraseSeq(cols))
	var lines []string
	for _, s := range r.active {
		l := r.line(s, now, cols)
		lines = append(lines, l)
		b.WriteString(l + "\n")
	}
	_, _ = io.WriteString(r.w, b.String())
	r.drawn, r.last = lines, now
}

// print writes a line above the region and draws the region again below it.
func (r *TTYRenderer) print(s string) {
	r.erase()
	fmt.Fprintln(r.w, s)
	r.redraw(true)
}

// Close removes the region and stops following the terminal's size.
func (r *TTYRenderer) Close() error {
	if r.winch != nil {
		signal.Stop(r.winch)
		close(r.winch)
		r.winch = nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.erase()
	r.active = nil
	return nil
}

func firstLineOf(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
