package progress

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
	"github.com/bootstrap-dev/bootstrap/internal/redact"
)

// screen is the little of a VT100 the renderer uses: text, CR, LF, ESC[nA (up), ESC[J (clear to
// the end of the screen), ESC[K (clear to the end of the line), on a terminal cols wide that
// wraps long lines and re-wraps (reflows) them when resized, as VTE, kitty, iTerm2 and tmux do.
// It holds what a person would see: hard lines (a wrapped line is one), and the cursor as a hard
// line and an offset in it.
type screen struct {
	cols      int // 0: no wrapping
	lines     [][]rune
	line, off int
}

// phys is the cursor's row and column counted in rows on screen.
func (s *screen) phys() (row, col int) {
	for i := 0; i < s.line; i++ {
		row += s.rowsOf(i)
	}
	if s.cols <= 0 {
		return row, s.off
	}
	return row + s.off/s.cols, s.off % s.cols
}

func (s *screen) rowsOf(i int) int {
	if s.cols <= 0 || len(s.lines[i]) == 0 {
		return 1
	}
	return (len(s.lines[i]) + s.cols - 1) / s.cols
}

// up moves the cursor n rows up, keeping its column.
func (s *screen) up(n int) {
	row, col := s.phys()
	row = max(0, row-n)
	for i := range s.lines {
		if r := s.rowsOf(i); row < r {
			s.line, s.off = i, row*max(s.cols, 0)+col
			return
		}
		row -= s.rowsOf(i)
	}
}

func (s *screen) write(b []byte) {
	in := []rune(string(b))
	for i := 0; i < len(in); i++ {
		for len(s.lines) <= s.line {
			s.lines = append(s.lines, nil)
		}
		switch c := in[i]; c {
		case '\r':
			if s.cols > 0 {
				s.off -= s.off % s.cols
			} else {
				s.off = 0
			}
		case '\n':
			s.line, s.off = s.line+1, 0
		case 0x1b:
			j := i + 2 // ESC [ digits letter
			for j < len(in) && in[j] >= '0' && in[j] <= '9' {
				j++
			}
			n, _ := strconv.Atoi(string(in[i+2 : j]))
			switch in[j] {
			case 'A':
				s.up(n)
			case 'J':
				s.lines = s.lines[:s.line+1]
				s.lines[s.line] = s.lines[s.line][:min(s.off, len(s.lines[s.line]))]
			case 'K':
				end := len(s.lines[s.line])
				if s.cols > 0 {
					end = min(end, s.off-s.off%s.cols+s.cols)
				}
				if s.off < end {
					s.lines[s.line] = append(s.lines[s.line][:s.off], s.lines[s.line][end:]...)
				}
			}
			i = j
		default:
			line := s.lines[s.line]
			for len(line) <= s.off {
				line = append(line, ' ')
			}
			line[s.off] = c
			s.lines[s.line] = line
			s.off++
		}
	}
}

func (s *screen) String() string {
	var lines []string
	for _, r := range s.lines {
		lines = append(lines, strings.TrimRight(string(r), " "))
	}
	return strings.TrimRight(strings.Join(lines, "\n"), "\n")
}

// TestTTYScreenOnAPseudoTerminal drives the renderer New picks for a real terminal (a pty) through
// a run and checks the screen after each phase: finished stages print one line and leave the
// live region, logs go above it, two active stages have a line each, and the mirror's time left
// counts the blobs still to copy, not only the bytes; bars are progressbar/v3's, lines cut to the width.
func TestTTYScreenOnAPseudoTerminal(t *testing.T) {
	term := openTerm(t, 120) // a live line longer than 120 columns is cut (its elapsed time kept), never wrapped
	// As production draws it: through the secret scrubber in front of the terminal.
	r, err := New(redact.New().Writer(term.tty), Auto)
	if err != nil {
		t.Fatal(err)
	}
	tr, ok := r.(*TTYRenderer)
	if !ok {
		t.Fatalf("on a terminal New gives %T", r)
	}
	t0 := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	now := t0
	tr.now, tr.throttle = func() time.Time { return now }, 0
	at := func(sec int) time.Time { return t0.Add(time.Duration(sec) * time.Second) }
	screenNow := term.screen
	phases := []struct {
		name   string
		events []pipeline.Event
		want   string
	}{
		{"preflight done earlier, mirror starts", []pipeline.Event{
			{Kind: pipeline.StageSkipped, Stage: "preflight", Message: "finished with the same inputs", Time: at(0)},
			{Kind: pipeline.StageStarted, Stage: "mirror", Message: "first run", Time: at(0)},
			{Kind: pipeline.Progress, Stage: "mirror", Current: 0, Total: 1000 << 20, Unit: "bytes", Parts: 0, PartsTotal: 600, PartsUnit: "blobs", DoneTotal: 40, Time: at(0)},
			// the largest blobs first: 80% of the bytes in 10 s, but 100 of 600 blobs
			{Kind: pipeline.Progress, Stage: "mirror", Current: 800 << 20, Total: 1000 << 20, Unit: "bytes", Parts: 100, PartsTotal: 600, PartsUnit: "blobs", Done: 2, DoneTotal: 40, Time: at(10)},
		}, `↷ preflight done earlier (journaled): finished with the same inputs
▶ mirror started: first run
mirror    80% [========>   ]  800.0 MiB / 1000.0 MiB  done 2/40  blobs 100/600  80.0 MiB/s  ETA 50s  [10s]`},
		{"a log line goes above the live line", []pipeline.Event{
			{Kind: pipeline.Warning, Stage: "mirror", Message: "retrying blob sha256:ab", Time: at(11)},
		}, `↷ preflight done earlier (journaled): finished with the same inputs
▶ mirror started: first run
! mirror WARNING: retrying blob sha256:ab
mirror    80% [========>   ]  800.0 MiB / 1000.0 MiB  done 2/40  blobs 100/600  80.0 MiB/s  ETA 50s  [11s]`},
		{"mirror ends: one final line, no live line left", []pipeline.Event{
			{Kind: pipeline.StageSucceeded, Stage: "mirror", Time: at(60)},
		}, `↷ preflight done earlier (journaled): finished with the same inputs
▶ mirror started: first run
! mirror WARNING: retrying blob sha256:ab
✓ mirror succeeded in 1m0s`},
		{"two active stages, a line each; install's log above, its latest line below", []pipeline.Event{
			{Kind: pipeline.StageStarted, Stage: "boot", Time: at(61)},
			{Kind: pipeline.Progress, Stage: "boot", Current: 2, Total: 5, Unit: "nodes", Time: at(70)},
			{Kind: pipeline.StageStarted, Stage: "install", Time: at(71)},
			{Kind: pipeline.Info, Stage: "install", Message: `level=info msg="Still waiting for the cluster"`, Time: at(80)},
		}, `↷ preflight done earlier (journaled): finished with the same inputs
▶ mirror started: first run
! mirror WARNING: retrying blob sha256:ab
✓ mirror succeeded in 1m0s
▶ boot started
▶ install started
  install level=info msg="Still waiting for the cluster"
boot      40% [===>        ]  2/5 nodes  [19s]
install   level=info msg="Still waiting for the cluster"  [9s]`},
		{"boot ends while install goes on", []pipeline.Event{
			{Kind: pipeline.StageSucceeded, Stage: "boot", Time: at(90)},
		}, `↷ preflight done earlier (journaled): finished with the same inputs
▶ mirror started: first run
! mirror WARNING: retrying blob sha256:ab
✓ mirror succeeded in 1m0s
▶ boot started
▶ install started
  install level=info msg="Still waiting for the cluster"
✓ boot succeeded in 29s
install   level=info msg="Still waiting for the cluster"  [19s]`},
		{"the install phase bar: the installer's phase and the nodes' states", []pipeline.Event{
			{Kind: pipeline.Progress, Stage: "install", Step: "installing", Current: 3, Total: 6, Unit: pipeline.UnitPhases,
				Done: 1, DoneTotal: 3, Message: "1 Done · 1 Rebooting (gpu-1) · 1 Writing image to disk (gpu-0)", Time: at(100)},
		}, `↷ preflight done earlier (journaled): finished with the same inputs
▶ mirror started: first run
! mirror WARNING: retrying blob sha256:ab
✓ mirror succeeded in 1m0s
▶ boot started
▶ install started
  install level=info msg="Still waiting for the cluster"
✓ boot succeeded in 29s
install   phase 3/6 installing  nodes 1/3 done  1 Done · 1 Rebooting (gpu-1) · 1 Writing image to disk (gpu-0)  [29s]`},
		{"more nodes than the width: the line is cut, the elapsed time stays", []pipeline.Event{
			{Kind: pipeline.Progress, Stage: "install", Step: "finalizing", Current: 4, Total: 6, Unit: pipeline.UnitPhases,
				Done: 5, DoneTotal: 8, Message: "5 Done · 3 Rebooting (gpu-5, gpu-6, gpu-7)", Time: at(200)},
		}, `↷ preflight done earlier (journaled): finished with the same inputs
▶ mirror started: first run
! mirror WARNING: retrying blob sha256:ab
✓ mirror succeeded in 1m0s
▶ boot started
▶ install started
  install level=info msg="Still waiting for the cluster"
✓ boot succeeded in 29s
install   phase 4/6 finalizing  nodes 5/8 done  5 Done · 3 Rebooting (gpu-5, gpu-6, gpu-7)  [2m9s]`},
		{"install ends: its final line, the region gone", []pipeline.Event{
			{Kind: pipeline.Progress, Stage: "install", Step: "cluster is healthy", Current: 6, Total: 6, Unit: pipeline.UnitPhases,
				Done: 8, DoneTotal: 8, Message: "8 Done · and a message long enough to be cut at the edge of a terminal of a hundred and twenty columns, or so", Time: at(300)},
		}, `↷ preflight done earlier (journaled): finished with the same inputs
▶ mirror started: first run
! mirror WARNING: retrying blob sha256:ab
✓ mirror succeeded in 1m0s
▶ boot started
▶ install started
  install level=info msg="Still waiting for the cluster"
✓ boot succeeded in 29s
install   phase 6/6 cluster is healthy  nodes 8/8 done  8 Done · and a message long enough to be cut at the e…  [3m49s]`},
		{"install succeeds", []pipeline.Event{
			{Kind: pipeline.StageSucceeded, Stage: "install", Time: at(301)},
		}, `↷ preflight done earlier (journaled): finished with the same inputs
▶ mirror started: first run
! mirror WARNING: retrying blob sha256:ab
✓ mirror succeeded in 1m0s
▶ boot started
▶ install started
  install level=info msg="Still waiting for the cluster"
✓ boot succeeded in 29s
✓ install succeeded in 3m50s`},
	}
	for _, ph := range phases {
		for _, e := range ph.events {
			now = e.Time // the clock of the screen moves with the events
			r.Handle(e)
		}
		if got := screenNow(); got != ph.want {
			t.Errorf("screen after %q:\n%s\n--- want:\n%s", ph.name, got, ph.want)
		}
	}
	_ = r.Close()
	if got := screenNow(); strings.Contains(got, "install   ") {
		t.Errorf("Close left the live region on screen:\n%s", got)
	}
}

// vterm is a pseudo-terminal whose output is read as a reflowing terminal of its width shows it.
type vterm struct {
	ptm, tty *os.File
	shown    screen
	pending  []byte // output after its last newline: shown with the rest of its line
	chunks   chan []byte
}

func openTerm(t *testing.T, cols int) *vterm {
	t.Helper()
	ptm, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ptm.Close(); tty.Close() })
	tm := &vterm{ptm: ptm, tty: tty, chunks: make(chan []byte, 1024)}
	// Everything the renderer wrote reaches the master; read it as the terminal would.
	go func() {
		buf := make([]byte, 1<<16)
		for {
			n, err := ptm.Read(buf)
			if n > 0 {
				tm.chunks <- append([]byte(nil), buf[:n]...)
			}
			if err != nil {
				close(tm.chunks)
				return
			}
		}
	}()
	tm.resize(t, cols)
	return tm
}

// resize sets the terminal's width (the kernel keeps it, the renderer asks it) once what was
// written before has been shown, and re-wraps what it shows, as a reflowing terminal does.
func (tm *vterm) resize(t *testing.T, cols int) {
	t.Helper()
	tm.screen()
	if err := pty.Setsize(tm.tty, &pty.Winsize{Rows: 40, Cols: uint16(cols)}); err != nil {
		t.Fatal(err)
	}
	tm.shown.cols = cols
}

// screen is what the terminal shows once the output has been quiet for 300 ms.
func (tm *vterm) screen() string {
	for {
		select {
		case c, ok := <-tm.chunks:
			if !ok {
				return tm.shown.String()
			}
			// a chunk may end inside an escape sequence: show whole lines only
			tm.pending = append(tm.pending, c...)
			if i := bytes.LastIndexByte(tm.pending, '\n'); i >= 0 {
				tm.shown.write(tm.pending[:i+1])
				tm.pending = append([]byte(nil), tm.pending[i+1:]...)
			}
			continue
		case <-time.After(300 * time.Millisecond):
		}
		return tm.shown.String()
	}
}
