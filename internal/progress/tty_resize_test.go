package progress

import (
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
	"github.com/bootstrap-dev/bootstrap/internal/redact"
)

// TestTTYFollowsTheTerminalsWidth resizes a real pty mid-run, as a person drags a window: the
// renderer (behind the secret scrubber, as production draws it) asks the terminal's width, and a
// SIGWINCH draws the live region again at once, cut to the new width, with nothing stale left
// above it even where the terminal re-wrapped the region's old, longer lines.
func TestTTYFollowsTheTerminalsWidth(t *testing.T) {
	tm := openTerm(t, 120)
	r, err := New(redact.New().Writer(tm.tty), Auto)
	if err != nil {
		t.Fatal(err)
	}
	tr := r.(*TTYRenderer)
	t.Cleanup(func() { _ = r.Close() })
	t0 := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	now := t0
	tr.now, tr.throttle = func() time.Time { return now }, 0
	at := func(sec int) time.Time { return t0.Add(time.Duration(sec) * time.Second) }
	send := func(es ...pipeline.Event) {
		for _, e := range es {
			now = e.Time
			r.Handle(e)
		}
	}
	history := []string{"▶ mirror started: first run", "▶ install started"}
	send(
		pipeline.Event{Kind: pipeline.StageStarted, Stage: "mirror", Message: "first run", Time: at(0)},
		pipeline.Event{Kind: pipeline.Progress, Stage: "mirror", Current: 0, Total: 1000 << 20, Unit: "bytes", PartsTotal: 600, PartsUnit: "blobs", DoneTotal: 40, Time: at(0)},
		pipeline.Event{Kind: pipeline.Progress, Stage: "mirror", Current: 800 << 20, Total: 1000 << 20, Unit: "bytes", Parts: 100, PartsTotal: 600, PartsUnit: "blobs", Done: 2, DoneTotal: 40, Time: at(10)},
		pipeline.Event{Kind: pipeline.StageStarted, Stage: "install", Time: at(10)},
		pipeline.Event{Kind: pipeline.Progress, Stage: "install", Step: "installing", Current: 3, Total: 6, Unit: pipeline.UnitPhases,
			Done: 5, DoneTotal: 8, Message: "5 Done · 3 Rebooting (gpu-5, gpu-6, gpu-7) · and more words than a narrow terminal has room for", Time: at(12)},
	)
	mirror := "mirror    80% [========>   ]  800.0 MiB / 1000.0 MiB  done 2/40  blobs 100/600  80.0 MiB/s  ETA 50s  [12s]"
	install := "install   phase 3/6 installing  nodes 5/8 done  5 Done · 3 Rebooting (gpu-5, gpu-6, gpu-7) · and more words than a narrow terminal has room for  [2s]"
	steps := []struct {
		cols          int
		mirror, inst  string // the live lines expected
		afterSIGWINCH bool
	}{
		{120, mirror, "install   phase 3/6 installing  nodes 5/8 done  5 Done · 3 Rebooting (gpu-5, gpu-6, gpu-7) · and more words than…  [2s]", false},
		{60, "mirror    80% [========>   ]  800.0 MiB / 1000.0 Mi…  [12s]", "install   phase 3/6 installing  nodes 5/8 done  5 Do…  [2s]", true},
		{200, mirror, install, true},
		{120, mirror, "install   phase 3/6 installing  nodes 5/8 done  5 Done · 3 Rebooting (gpu-5, gpu-6, gpu-7) · and more words than…  [2s]", true},
	}
	for i, st := range steps {
		if i > 0 {
			tm.resize(t, st.cols)
			if err := syscall.Kill(os.Getpid(), syscall.SIGWINCH); err != nil {
				t.Fatal(err)
			}
		}
		want := strings.Join(append(append([]string(nil), history...), st.mirror, st.inst), "\n")
		got := tm.screen()
		for deadline := time.Now().Add(5 * time.Second); got != want && time.Now().Before(deadline); {
			got = tm.screen() // the redraw follows the signal, not the resize
		}
		if got != want {
			t.Fatalf("at %d columns the screen shows:\n%s\n--- want:\n%s", st.cols, got, want)
		}
		for _, l := range []string{st.mirror, st.inst} {
			if n := utf8.RuneCountInString(l); n > st.cols-1 {
				t.Errorf("at %d columns a live line has %d: %q", st.cols, n, l)
			}
		}
		// The run goes on at this width: the next event is drawn at it too, over the region.
		send(pipeline.Event{Kind: pipeline.Info, Stage: "mirror", Message: "copied quay.io/x", Time: at(12)})
		history = append(history, "  mirror copied quay.io/x")
		got = tm.screen()
		if want := strings.Join(append(append([]string(nil), history...), st.mirror, st.inst), "\n"); got != want {
			t.Fatalf("at %d columns after an event the screen shows:\n%s\n--- want:\n%s", st.cols, got, want)
		}
	}
}
