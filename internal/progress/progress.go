package progress

import (
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/term"

	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
	"github.com/bootstrap-dev/bootstrap/internal/units"
)

// Format selects a renderer.
type Format string

// Formats.
const (
	Auto  Format = "auto"  // TTY on a terminal, Plain otherwise
	TTY   Format = "tty"   // progress bars
	Plain Format = "plain" // timestamped lines
	JSON  Format = "json"  // one event per line
)

// Renderer shows pipeline events. Handle is a pipeline.Sink; Close flushes and stops it.
type Renderer interface {
	Handle(e pipeline.Event)
	Close() error
}

// New returns the renderer for format writing to w. Auto picks TTY when w is a terminal.
func New(w io.Writer, format Format) (Renderer, error) {
	switch format {
	case Auto, "":
		if IsTerminal(w) {
			return NewTTY(w), nil
		}
		return NewPlain(w, PlainOptions{}), nil
	case TTY:
		return NewTTY(w), nil
	case Plain:
		return NewPlain(w, PlainOptions{}), nil
	case JSON:
		return NewJSON(w), nil
	}
	return nil, fmt.Errorf("unknown output format %q: use auto, tty, plain or json", format)
}

// IsTerminal reports whether w is a terminal.
// A wrapper (the secret scrubber in front of stdout) is seen through by its Unwrap method.
func IsTerminal(w io.Writer) bool {
	if u, ok := w.(interface{ Unwrap() io.Writer }); ok {
		return IsTerminal(u.Unwrap())
	}
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// stamp returns the event time, or now when the sender left it empty.
func stamp(e pipeline.Event) time.Time {
	if e.Time.IsZero() {
		return time.Now()
	}
	return e.Time
}

// amount renders n in unit: bytes in IEC units, anything else as a count with the unit.
func amount(n int64, unit string) string {
	if unit != "bytes" {
		return fmt.Sprintf("%d", n)
	}
	return units.Bytes(n)
}

// TimeLeftOfBoth is the later of the time left by bytes and by parts (blobs), to the second: a
// mirror copies the largest blobs first, so bytes alone promise an end while many small blobs
// remain. "" when neither can tell.
func TimeLeftOfBoth(bytesDone, bytesTotal int64, bytesRate float64, partsDone, partsTotal int64, partsRate float64) string {
	eta := max(etaOf(bytesDone, bytesTotal, bytesRate), etaOf(partsDone, partsTotal, partsRate))
	if eta <= 0 {
		return ""
	}
	return eta.Round(time.Second).String()
}

// TimeLeft is how long the rest of total takes at rate (units a second), to the second; "" when
// it cannot be told (no rate yet, or nothing left).
func TimeLeft(done, total int64, rate float64) string {
	if rate <= 0 || total <= done {
		return ""
	}
	return time.Duration(float64(total-done) / rate * float64(time.Second)).Round(time.Second).String()
}

// progressText describes a progress event: "1.2 GiB / 4.0 GiB (30%), 3/40 done, blobs 120/641"
// or "7 / 9 nodes (77%)".
func progressText(e pipeline.Event) string {
	if e.Unit == pipeline.UnitPhases {
		s := fmt.Sprintf("phase %d/%d %s", e.Current, e.Total, e.Step)
		if e.DoneTotal > 0 {
			s += fmt.Sprintf(", nodes %d/%d done", e.Done, e.DoneTotal)
		}
		if e.Message != "" {
			s += ": " + e.Message
		}
		return s
	}
	s := amount(e.Current, e.Unit)
	if e.Total > 0 {
		s += " / " + amount(e.Total, e.Unit)
	}
	if e.Unit != "" && e.Unit != "bytes" {
		s += " " + e.Unit
	}
	if e.Total > 0 {
		s += fmt.Sprintf(" (%d%%)", e.Current*100/e.Total)
	}
	if e.DoneTotal > 0 {
		s += fmt.Sprintf(", %d/%d done", e.Done, e.DoneTotal)
	} else if e.Done > 0 {
		s += fmt.Sprintf(", %d done", e.Done)
	}
	if e.PartsTotal > 0 {
		s += fmt.Sprintf(", %s %d/%d", e.PartsUnit, e.Parts, e.PartsTotal)
	}
	return s
}

// describe is the one-line text of a non-progress event.
func describe(e pipeline.Event) string {
	var s string
	switch e.Kind {
	case pipeline.StageStarted:
		s = "started"
	case pipeline.StageSucceeded:
		s = "succeeded"
	case pipeline.StageFailed:
		s = "FAILED"
	case pipeline.StageSkipped: // found finished in the journal: not "succeeded", nothing ran now
		s = doneEarlier
	case pipeline.StageStale:
		s = "stale"
	case pipeline.StepDone:
		s = "done " + e.Step
	case pipeline.Warning:
		s = "WARNING"
	case pipeline.Failure:
		s = "FAIL"
	case pipeline.Info:
		s = ""
	default:
		s = string(e.Kind)
	}
	if e.Status != "" { // a checked item says its own verdict: PASS, WARN, FAIL
		s = e.Status
	}
	if e.Node != "" && e.Kind != pipeline.StepDone {
		s += " [" + e.Node + "]"
	}
	if e.Message != "" {
		if s != "" {
			s += ": "
		}
		s += e.Message
	}
	return s
}
