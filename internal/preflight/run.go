package preflight

import (
	"context"
	"fmt"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/bootstrap-dev/bootstrap/internal/finding"
)

// Defaults for Runner.
const (
	DefaultTimeout  = 10 * time.Second
	defaultParallel = 8
	// grace is how long the runner waits past a check's deadline for the check's own (more
	// specific) result before recording a timeout.
	grace = 200 * time.Millisecond
)

// Runner runs checks concurrently, each under its own timeout.
type Runner struct {
	// Timeout bounds each check; 0 means DefaultTimeout.
	Timeout time.Duration
	// Parallel is how many checks run at once; 0 means defaultParallel.
	Parallel int
	// Progress, when set, is called once per finished check, from many goroutines.
	Progress func(CheckResult)
}

// CheckResult is one check's result with its identity, as reported.
type CheckResult struct {
	Name     string   `json:"name"`
	Category Category `json:"category"`
	// NeededBy is the stages that need it (NeededBy; empty: every stage). Blocking says whether
	// it failed and one of them runs (Report.Scoped).
	Blocking bool `json:"blocking,omitempty"`
	finding.Finding
	// Duration is how long the check ran.
	Duration time.Duration `json:"-"`
	// DurationMS is Duration in milliseconds, for JSON readers.
	DurationMS int64 `json:"durationMs"`
}

// Summary counts results by status.
type Summary struct {
	Pass int `json:"pass"`
	Warn int `json:"warn"`
	Fail int `json:"fail"` // failures that block the stages selected
	// NotBlocking counts failures none of whose stages is selected.
	NotBlocking int `json:"failNotBlocking,omitempty"`
}

// Report is the outcome of a preflight run. Results are ordered by category (jumphost, files,
// dns, ntp, network, registry, bmc, git), then in the order the checks were given, whatever
// order they finished in.
type Report struct {
	Checks  []CheckResult `json:"checks"`
	Summary Summary       `json:"summary"`
	// Scope is the stages selected (Scoped; nil: every stage).
	Scope []string `json:"scope,omitempty"`
}

// Failed lists the names of the failed checks that block the stages selected.
func (r Report) Failed() []string {
	var out []string
	for _, c := range r.Checks {
		if c.Blocking {
			out = append(out, c.Name)
		}
	}
	return out
}

// Err returns a *FailedError when any check failed, else nil.
func (r Report) Err() error {
	if f := r.Failed(); len(f) > 0 {
		ok, blocked := r.proceed()
		return &FailedError{Checks: f, Blocked: blocked, Proceed: ok}
	}
	return nil
}

// FailedError says that preflight ran and at least one check failed. The CLI maps it to exit
// code 2; branch on it with errors.As.
type FailedError struct {
	Checks []string // names of the failed checks, in report order
	// Blocked is the selected stages the failures block; Proceed the longest run of the selected
	// stages, from the first, that they do not block (empty: none).
	Blocked, Proceed []string
}

// Error names the failed checks.
func (e *FailedError) Error() string {
	msg := fmt.Sprintf("preflight: %d check(s) failed: %s", len(e.Checks), strings.Join(e.Checks, ", "))
	if len(e.Blocked) > 0 {
		msg += " (needed by " + strings.Join(e.Blocked, ", ") + ")"
	}
	return msg
}

// Remedy is what to do about a failed preflight as a whole (each check has its own remedy).
func (e *FailedError) Remedy() string {
	return "fix what each failed check reports (its remedy is shown with it; `bootstrap preflight -f SITE` " +
		"checks again without running anything), then run again"
}

// Run runs the checks and returns their results. It returns when every check has a result; a
// check that overruns its timeout is recorded as failed and left to finish on its own.
// Cancelling ctx makes the remaining checks fail as cancelled.
func (r Runner) Run(ctx context.Context, checks []Check) Report {
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	par := r.Parallel
	if par <= 0 {
		par = defaultParallel
	}
	results := make([]CheckResult, len(checks))
	sem := make(chan struct{}, par)
	var wg sync.WaitGroup
	for i, c := range checks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
				defer func() { <-sem }()
			case <-ctx.Done():
			}
			res := runOne(ctx, c, timeout)
			results[i] = res
			if r.Progress != nil {
				r.Progress(res)
			}
		}()
	}
	wg.Wait()
	sort.SliceStable(results, func(a, b int) bool {
		return categoryRank(results[a].Category) < categoryRank(results[b].Category)
	})
	results = collapseNotChecked(results)
	return Report{Checks: results}.Scoped(nil)
}

// runOne runs a check under its own deadline, turning a panic or an overrun into a Fail.
// maxMessage bounds a result's message: a check may quote a peer's error body, which is the
// peer's to fill.
const maxMessage = 4 << 10

func runOne(ctx context.Context, c Check, timeout time.Duration) CheckResult {
	out := runCheck(ctx, c, timeout)
	out.NeededBy = NeededBy(out.Name, out.Category)
	if m := out.Finding.Message; len(m) > maxMessage {
		n := maxMessage
		for n > 0 && !utf8.RuneStart(m[n]) {
			n--
		}
		out.Finding.Message = m[:n] + "… (truncated)"
	}
	return out
}

func runCheck(ctx context.Context, c Check, timeout time.Duration) CheckResult {
	out := CheckResult{Name: c.Name(), Category: c.Category()}
	start := time.Now()
	if tc, ok := c.(TimeoutCheck); ok && tc.Timeout() > 0 {
		timeout = tc.Timeout()
	}
	if err := ctx.Err(); err != nil {
		out.Finding = finding.Failf("Run preflight again.", "not run: %v", err)
		return out
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	done := make(chan finding.Finding, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- finding.Failf("This is a bug in the check; report it with the stack below.",
					"check panicked: %v\n%s", p, debug.Stack())
			}
		}()
		done <- c.Run(cctx)
	}()
	select {
	case out.Finding = <-done:
	case <-cctx.Done():
		t := time.NewTimer(grace)
		select {
		case out.Finding = <-done:
		case <-t.C:
			if ctx.Err() != nil {
				out.Finding = finding.Failf("Run preflight again.", "cancelled after %s", time.Since(start).Round(time.Millisecond))
			} else {
				out.Finding = finding.Failf("Check that the peer is reachable from the jump host, or raise the preflight timeout.",
					"no result within %s", timeout)
			}
		}
		t.Stop()
	}
	out.Duration = time.Since(start)
	out.DurationMS = out.Duration.Milliseconds()
	return out
}

// notCheckedPrefix starts the message of a check skipped because another one failed first.
const notCheckedPrefix = "not checked: "

// collapseNotChecked folds the checks of one target skipped for the same reason (nine BMC checks
// behind an unreachable BMC) into one row: "not checked because ...", naming them. A table of
// 59 rows where 45 said "not checked" hid the few that mattered.
func collapseNotChecked(results []CheckResult) []CheckResult {
	type group struct {
		row   int
		names []string
	}
	out := make([]CheckResult, 0, len(results))
	groups := map[string]*group{} // category, target, reason
	for _, c := range results {
		target, _, ok := cutLast(c.Name)
		if c.Status != finding.Warn || !strings.HasPrefix(c.Message, notCheckedPrefix) || !ok {
			out = append(out, c)
			continue
		}
		reason := strings.TrimPrefix(c.Message, notCheckedPrefix)
		key := string(c.Category) + "\x00" + target + "\x00" + reason
		g := groups[key]
		if g == nil {
			groups[key] = &group{row: len(out), names: []string{c.Name}}
			out = append(out, c) // alone it stays as it is
			continue
		}
		g.names = append(g.names, c.Name)
		r := &out[g.row]
		r.Name = fmt.Sprintf("%s (%d checks)", target, len(g.names))
		r.Message = "not checked because " + reason + ": " + strings.Join(g.names, ", ")
		r.DurationMS = max(r.DurationMS, c.DurationMS)
		r.Duration = max(r.Duration, c.Duration)
	}
	return out
}

// cutLast splits "bmc cp-0 media" into "bmc cp-0" and "media".
func cutLast(name string) (target, last string, ok bool) {
	i := strings.LastIndexByte(name, ' ')
	if i <= 0 {
		return "", "", false
	}
	return name[:i], name[i+1:], true
}
