package progress

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
)

// syncBuffer is a bytes.Buffer safe for the renderers' goroutines and the test's reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// hammer sends events from many goroutines at once.
func hammer(r Renderer, goroutines, each int) {
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				r.Handle(pipeline.Event{Kind: pipeline.Progress, Stage: "mirror", Current: int64(i), Total: int64(each),
					Unit: "bytes", Node: fmt.Sprint(g)})
			}
		}()
	}
	wg.Wait()
}

func TestJSONOneEventPerLine(t *testing.T) {
	var buf syncBuffer
	r := NewJSON(&buf)
	hammer(r, 8, 200)
	r.Handle(pipeline.Event{Kind: pipeline.StageFailed, Stage: "mirror", Message: "<401> & co"})
	r.Close()
	sc := bufio.NewScanner(strings.NewReader(buf.String()))
	n := 0
	var last pipeline.Event
	for sc.Scan() {
		n++
		last = pipeline.Event{}
		if err := json.Unmarshal(sc.Bytes(), &last); err != nil {
			t.Fatalf("line %d: %v: %q", n, err, sc.Text())
		}
		if last.Time.IsZero() {
			t.Fatalf("line %d has no time", n)
		}
	}
	if n != 8*200+1 || last.Kind != pipeline.StageFailed || last.Message != "<401> & co" {
		t.Fatalf("%d lines, last %+v", n, last)
	}
	if !strings.Contains(buf.String(), `"<401> & co"`) {
		t.Error("messages are HTML-escaped")
	}
}

// lines splits rendered output and keeps those containing sub.
func lines(out, sub string) []string {
	var keep []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.Contains(l, sub) {
			keep = append(keep, l)
		}
	}
	return keep
}

func TestPlainThrottleAndHeartbeat(t *testing.T) {
	var buf syncBuffer
	r := newPlain(&buf, PlainOptions{Interval: 5 * time.Second, Heartbeat: 10 * time.Second})
	t0 := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	r.Handle(pipeline.Event{Time: at(0), Kind: pipeline.StageStarted, Stage: "mirror", Message: "first run"})
	// 20 s of progress, an event every 100 ms at 10 MiB/s, with the ticker every second.
	for ms := 100; ms <= 20000; ms += 100 {
		r.Handle(pipeline.Event{Time: at(ms), Kind: pipeline.Progress, Stage: "mirror",
			Current: int64(ms) * 10 << 20 / 1000, Total: 400 << 20, Unit: "bytes", Done: int64(ms / 1000), DoneTotal: 40,
			Parts: int64(ms / 100), PartsTotal: 400, PartsUnit: "blobs"})
		if ms%1000 == 0 {
			r.tick(at(ms))
		}
	}
	progress := lines(buf.String(), "MiB /")
	if len(progress) < 3 || len(progress) > 4 {
		t.Fatalf("%d progress lines in 20 s at a 5 s interval:\n%s", len(progress), buf.String())
	}
	last := progress[len(progress)-1]
	if !strings.Contains(last, "10.0 MiB/s") || !strings.Contains(progress[0], "/40 done") {
		t.Errorf("progress line lacks rate or counts: %q", progress)
	}
	// at 20 s: 200 of 400 MiB at 10 MiB/s, 200 of 400 blobs
	if !strings.Contains(last, "200.0 MiB / 400.0 MiB (50%), 20/40 done, blobs 200/400, 10.0 MiB/s, ETA 20s") {
		t.Errorf("last progress line: %q", last)
	}
	// 35 s of silence: a heartbeat at most every 10 s.
	before := len(lines(buf.String(), "mirror"))
	for s := 21; s <= 55; s++ {
		r.tick(at(s * 1000))
	}
	beats := lines(buf.String(), "still running")
	if len(beats) != 3 || len(lines(buf.String(), "mirror")) != before+3 {
		t.Fatalf("heartbeats %d in 35 s of silence:\n%s", len(beats), buf.String())
	}
	r.Handle(pipeline.Event{Time: at(56000), Kind: pipeline.StageSucceeded, Stage: "mirror", Message: "56s"})
	r.Handle(pipeline.Event{Time: at(57000), Kind: pipeline.StageSkipped, Stage: "iso", Message: "finished"})
	r.Handle(pipeline.Event{Time: at(58000), Kind: pipeline.Warning, Message: "torn line"})
	for s := 59; s <= 90; s++ {
		r.tick(at(s * 1000))
	}
	out := buf.String()
	for _, want := range []string{
		"2026-12-02T10:00:00Z mirror     started: first run",
		"2026-12-02T10:00:56Z mirror     succeeded: 56s",
		"iso        done earlier (journaled): finished",
		"-          WARNING: torn line",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	if n := len(lines(out, "still running")); n != 3 {
		t.Errorf("heartbeats after the stage ended: %d lines", n)
	}
}

// With the default options a progressing stage prints a line every 2 s (the mirror's progress
// promise), not on every event.
func TestPlainDefaultEveryTwoSeconds(t *testing.T) {
	var buf syncBuffer
	r := newPlain(&buf, PlainOptions{})
	t0 := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	r.Handle(pipeline.Event{Time: t0, Kind: pipeline.StageStarted, Stage: "mirror"})
	for ms := 100; ms <= 10000; ms += 100 {
		at := t0.Add(time.Duration(ms) * time.Millisecond)
		r.Handle(pipeline.Event{Time: at, Kind: pipeline.Progress, Stage: "mirror", Current: int64(ms) << 10,
			Total: 20000 << 10, Unit: "bytes"})
		if ms%1000 == 0 {
			r.tick(at)
		}
	}
	if got := lines(buf.String(), "MiB /"); len(got) != 5 {
		t.Fatalf("%d progress lines in 10 s, want 5:\n%s", len(got), buf.String())
	}
}

func TestPlainStepsAndNodes(t *testing.T) {
	var buf syncBuffer
	r := newPlain(&buf, PlainOptions{})
	t0 := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	r.Handle(pipeline.Event{Time: t0, Kind: pipeline.StageStarted, Stage: "work"})
	for i := 1; i <= 1000; i++ {
		r.Handle(pipeline.Event{Time: t0.Add(time.Duration(i) * 10 * time.Millisecond), Kind: pipeline.StepDone,
			Stage: "work", Step: fmt.Sprint(i), Done: int64(i)})
	}
	r.Handle(pipeline.Event{Time: t0.Add(11 * time.Second), Kind: pipeline.StepDone, Stage: "work",
		Step: pipeline.NodeStep("w1", "power-on"), Node: "w1"})
	r.Handle(pipeline.Event{Time: t0.Add(12 * time.Second), Kind: pipeline.Progress, Stage: "work", Current: 7, Total: 9, Unit: "nodes"})
	r.Close()
	out := buf.String()
	if !strings.Contains(out, "7 / 9 nodes (77%)") {
		t.Errorf("Close did not flush pending progress:\n%s", out)
	}
	if n := len(lines(out, "steps done")); n != 5 {
		t.Errorf("%d step lines for 10 s of steps, want 5 (every 2 s):\n%s", n, out)
	}
	if len(lines(out, "node:w1/power-on")) != 1 {
		t.Errorf("node step not shown:\n%s", out)
	}
}

func TestPlainConcurrentWithTicker(t *testing.T) {
	var buf syncBuffer
	r := NewPlain(&buf, PlainOptions{Interval: time.Millisecond, Heartbeat: time.Millisecond})
	r.Handle(pipeline.Event{Kind: pipeline.StageStarted, Stage: "mirror"})
	hammer(r, 8, 500)
	time.Sleep(1100 * time.Millisecond) // let the ticker run once alongside
	r.Handle(pipeline.Event{Kind: pipeline.StageSucceeded, Stage: "mirror"})
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	r.Close() // twice is fine
	if !strings.Contains(buf.String(), "succeeded") {
		t.Error(buf.String())
	}
}

func TestTTY(t *testing.T) {
	var buf syncBuffer
	r := NewTTY(&buf)
	r.throttle = 0 // draw every update, so the output shows them
	r.Handle(pipeline.Event{Kind: pipeline.StageSkipped, Stage: "preflight", Message: "finished with the same inputs"})
	r.Handle(pipeline.Event{Kind: pipeline.StageStarted, Stage: "mirror", Message: "first run"})
	hammer(r, 8, 200)
	r.Handle(pipeline.Event{Kind: pipeline.Progress, Stage: "mirror", Current: 150, Total: 200, Unit: "bytes",
		Done: 3, DoneTotal: 40, Parts: 120, PartsTotal: 641, PartsUnit: "blobs"})
	r.Handle(pipeline.Event{Kind: pipeline.Warning, Stage: "mirror", Message: "retrying blob"})
	r.Handle(pipeline.Event{Kind: pipeline.StageSucceeded, Stage: "mirror"})
	r.Handle(pipeline.Event{Kind: pipeline.StageStarted, Stage: "boot"})
	for i := 1; i <= 50; i++ {
		r.Handle(pipeline.Event{Kind: pipeline.StepDone, Stage: "boot", Step: fmt.Sprint(i), Done: int64(i)})
	}
	r.Handle(pipeline.Event{Kind: pipeline.StepDone, Stage: "boot", Step: "node:w1/power-on", Node: "w1"})
	r.Handle(pipeline.Event{Kind: pipeline.StageFailed, Stage: "boot", Message: "w3: 401"})
	r.Close()
	out := buf.String()
	for _, want := range []string{"↷ preflight done earlier (journaled)", "▶ mirror started: first run", "! mirror WARNING: retrying blob",
		"✓ mirror succeeded in", "75% [========>   ]  150 B / 200 B  done 3/40  blobs 120/641", "50 steps done", "boot w1: node:w1/power-on", "✗ boot FAILED: w3: 401"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in %q", want, out)
		}
	}
}

func TestNew(t *testing.T) {
	var buf bytes.Buffer
	for f, want := range map[Format]string{Auto: "*progress.PlainRenderer", Plain: "*progress.PlainRenderer",
		JSON: "*progress.JSONRenderer", TTY: "*progress.TTYRenderer"} {
		r, err := New(&buf, f)
		if err != nil || fmt.Sprintf("%T", r) != want {
			t.Errorf("%s: %T %v, want %s", f, r, err, want)
		}
		r.Close()
	}
	if _, err := New(&buf, "xml"); err == nil {
		t.Error("unknown format accepted")
	}
}

func TestTimeLeft(t *testing.T) {
	for _, c := range []struct {
		done, total int64
		rate        float64
		want        string
	}{
		{0, 100, 10, "10s"},
		{50, 100, 0.4, "2m5s"},
		{100, 100, 10, ""}, // nothing left
		{10, 100, 0, ""},   // no rate yet
		{1, 3600 * 1000, 1000, "1h0m0s"},
	} {
		if got := TimeLeft(c.done, c.total, c.rate); got != c.want {
			t.Errorf("TimeLeft(%d, %d, %g) = %q, want %q", c.done, c.total, c.rate, got, c.want)
		}
	}
}

// A checked item says its own verdict; a FAIL row is never labelled WARNING.
func TestDescribeCheckVerdicts(t *testing.T) {
	for _, tc := range []struct {
		e    pipeline.Event
		want string
	}{
		{pipeline.Event{Kind: pipeline.Failure, Status: "FAIL", Message: "bmc  bmc cp-0 reachable  refused"}, "FAIL: bmc  bmc cp-0 reachable  refused"},
		{pipeline.Event{Kind: pipeline.Warning, Status: "WARN", Message: "ntp  ntp 10.0.0.1  offset 2s"}, "WARN: ntp  ntp 10.0.0.1  offset 2s"},
		{pipeline.Event{Kind: pipeline.Info, Status: "PASS", Message: "dns  dns api  ok"}, "PASS: dns  dns api  ok"},
		{pipeline.Event{Kind: pipeline.Failure, Message: "image x failed"}, "FAIL: image x failed"},
		{pipeline.Event{Kind: pipeline.Warning, Message: "slow"}, "WARNING: slow"},
	} {
		if got := describe(tc.e); got != tc.want {
			t.Errorf("describe(%+v) = %q, want %q", tc.e, got, tc.want)
		}
	}
}

// The time left is the later of what bytes and blobs say.
func TestTimeLeftOfBoth(t *testing.T) {
	for _, tc := range []struct {
		bd, bt int64
		br     float64
		pd, pt int64
		pr     float64
		want   string
	}{
		{800, 1000, 80, 100, 600, 10, "50s"}, // bytes say 2.5 s, blobs 50 s
		{500, 1000, 50, 590, 600, 59, "10s"}, // bytes are behind
		{1000, 1000, 50, 600, 600, 10, ""},   // done
		{0, 1000, 0, 0, 600, 0, ""},          // no rate yet
	} {
		if got := TimeLeftOfBoth(tc.bd, tc.bt, tc.br, tc.pd, tc.pt, tc.pr); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc, got, tc.want)
		}
	}
}

// TestPhaseProgressText: phase progress reads as a phase and node states, with no rate or
// time left (phases are not amounts).
func TestPhaseProgressText(t *testing.T) {
	e := pipeline.Event{Kind: pipeline.Progress, Stage: "install", Step: "installing", Current: 3, Total: 6,
		Unit: pipeline.UnitPhases, Done: 1, DoneTotal: 3, Message: "1 Done · 2 Rebooting (gpu-0, gpu-1)"}
	if got, want := progressText(e), "phase 3/6 installing, nodes 1/3 done: 1 Done · 2 Rebooting (gpu-0, gpu-1)"; got != want {
		t.Fatalf("progressText = %q, want %q", got, want)
	}
	var buf bytes.Buffer
	r := newPlain(&buf, PlainOptions{Interval: time.Second, Heartbeat: time.Hour})
	t0 := time.Date(2026, 12, 5, 8, 0, 0, 0, time.UTC)
	r.Handle(pipeline.Event{Kind: pipeline.StageStarted, Stage: "install", Time: t0})
	for i, at := range []int{0, 5, 10} {
		e.Current, e.Time = int64(3+i), t0.Add(time.Duration(at)*time.Second)
		r.Handle(e)
		r.tick(e.Time.Add(2 * time.Second))
	}
	if strings.Contains(buf.String(), "/s") || strings.Contains(buf.String(), "/min") || strings.Contains(buf.String(), "ETA") {
		t.Fatalf("phase lines with a rate or time left:\n%s", buf.String())
	}
	if !strings.Contains(buf.String(), "phase 5/6 installing") {
		t.Fatalf("the last phase was not printed:\n%s", buf.String())
	}
}
