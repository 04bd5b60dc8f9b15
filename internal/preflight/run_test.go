package preflight

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/finding"
)

func sleeper(name string, cat Category, d time.Duration, st finding.Status) Check {
	return Func(name, cat, func(ctx context.Context) finding.Finding {
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return finding.Failf("retry", "%s: %v", name, ctx.Err())
		}
		return finding.Finding{Status: st, Message: name + " done", Remedy: map[bool]string{true: "do something"}[st != finding.Pass]}
	})
}

func TestRunnerOrderIsDeterministic(t *testing.T) {
	// Finishing order is the reverse of the given order; results must not care.
	checks := []Check{
		sleeper("ntp a", CategoryNTP, 40*time.Millisecond, finding.Pass),
		sleeper("dns b", CategoryDNS, 30*time.Millisecond, finding.Warn),
		sleeper("dns a", CategoryDNS, 20*time.Millisecond, finding.Pass),
		sleeper("git x", CategoryGit, 10*time.Millisecond, finding.Fail),
		sleeper("disk", CategoryJumpHost, 0, finding.Pass),
	}
	rep := Runner{}.Run(context.Background(), checks)
	var names []string
	for _, c := range rep.Checks {
		names = append(names, c.Name)
	}
	if got, want := strings.Join(names, ","), "disk,dns b,dns a,ntp a,git x"; got != want {
		t.Errorf("order %s, want %s", got, want)
	}
	if rep.Summary != (Summary{Pass: 3, Warn: 1, Fail: 1}) {
		t.Errorf("summary %+v", rep.Summary)
	}
	var fe *FailedError
	if err := rep.Err(); !errors.As(err, &fe) || len(fe.Checks) != 1 || fe.Checks[0] != "git x" {
		t.Errorf("Err() = %v, want a FailedError naming git x", err)
	}
}

func TestRunnerPerCheckTimeout(t *testing.T) {
	stubborn := Func("stubborn", CategoryNetwork, func(ctx context.Context) finding.Finding {
		time.Sleep(2 * time.Second) // ignores ctx: the runner must not wait for it
		return finding.Passf("late")
	})
	polite := sleeper("polite", CategoryNetwork, time.Hour, finding.Pass)
	quick := sleeper("quick", CategoryNetwork, 0, finding.Pass)
	start := time.Now()
	rep := Runner{Timeout: 100 * time.Millisecond}.Run(context.Background(), []Check{stubborn, polite, quick})
	if el := time.Since(start); el > 1500*time.Millisecond {
		t.Errorf("run took %s; per-check timeout is 100ms", el)
	}
	if r := rep.Checks[0]; r.Status != finding.Fail || !strings.Contains(r.Message, "no result within 100ms") {
		t.Errorf("stubborn: %+v", r.Finding)
	}
	// A check that honours ctx reports its own error (unless the machine is too loaded to let
	// it run within the grace period, when the runner's timeout message stands).
	if r := rep.Checks[1]; r.Status != finding.Fail || !strings.Contains(r.Message, "deadline exceeded") && !strings.Contains(r.Message, "no result within") {
		t.Errorf("polite: %+v", r.Finding)
	}
	if r := rep.Checks[2]; r.Status != finding.Pass {
		t.Errorf("quick: %+v", r.Finding)
	}
}

func TestRunnerPanicAndCancel(t *testing.T) {
	boom := Func("boom", CategoryFiles, func(context.Context) finding.Finding { panic("oops") })
	rep := Runner{}.Run(context.Background(), []Check{boom})
	if r := rep.Checks[0]; r.Status != finding.Fail || !strings.Contains(r.Message, "panicked: oops") {
		t.Errorf("panic: %+v", r.Finding)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rep = Runner{}.Run(ctx, []Check{sleeper("x", CategoryDNS, time.Hour, finding.Pass)})
	if r := rep.Checks[0]; r.Status != finding.Fail {
		t.Errorf("cancelled: %+v", r.Finding)
	}
}

func TestRunnerParallelLimit(t *testing.T) {
	var cur, peak atomic.Int32
	var checks []Check
	for i := range 12 {
		checks = append(checks, Func("c"+string(rune('a'+i)), CategoryDNS, func(context.Context) finding.Finding {
			n := cur.Add(1)
			for {
				p := peak.Load()
				if n <= p || peak.CompareAndSwap(p, n) {
					break
				}
			}
			time.Sleep(10 * time.Millisecond)
			cur.Add(-1)
			return finding.Passf("ok")
		}))
	}
	var progress atomic.Int32
	Runner{Parallel: 3, Progress: func(CheckResult) { progress.Add(1) }}.Run(context.Background(), checks)
	if p := peak.Load(); p > 3 || p < 2 {
		t.Errorf("peak concurrency %d, want 3", p)
	}
	if progress.Load() != 12 {
		t.Errorf("progress called %d times, want 12", progress.Load())
	}
}

func TestRender(t *testing.T) {
	rep := Runner{}.Run(context.Background(), []Check{
		Func("dns api.x", CategoryDNS, func(context.Context) finding.Finding {
			return finding.Failf("Add the record.", "api.x does not resolve")
		}),
		Func("disk /w", CategoryJumpHost, func(context.Context) finding.Finding { return finding.Passf("9 GiB free") }),
	})
	var tb bytes.Buffer
	if err := WriteTable(&tb, rep); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(tb.String(), "\n"), "\n")
	if len(lines) != 5 {
		t.Fatalf("table:\n%s", tb.String())
	}
	for i, want := range []string{"STATUS", "PASS jumphost disk /w", "FAIL dns dns api.x", "→ Add the record.", "1 passed, 0 warning(s), 1 failed"} {
		if !strings.Contains(strings.Join(strings.Fields(lines[i]), " "), want) {
			t.Errorf("line %d %q does not contain %q", i, lines[i], want)
		}
	}

	var jb bytes.Buffer
	if err := WriteJSON(&jb, rep); err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(jb.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back.Checks[1].Status != finding.Fail || back.Checks[1].Remedy != "Add the record." || back.Summary.Fail != 1 {
		t.Errorf("JSON round trip: %s", jb.String())
	}
	if !strings.Contains(jb.String(), `"status": "fail"`) || !strings.Contains(jb.String(), `"durationMs"`) {
		t.Errorf("JSON: %s", jb.String())
	}
}

// A check with its own budget (TimeoutCheck, as the Git checks are) is not cut at the runner's.
func TestRunnerCheckOwnTimeout(t *testing.T) {
	slow := withTimeout(sleeper("slow", CategoryGit, 300*time.Millisecond, finding.Pass), 5*time.Second)
	tight := withTimeout(sleeper("tight", CategoryGit, time.Hour, finding.Pass), 100*time.Millisecond)
	rep := Runner{Timeout: 50 * time.Millisecond}.Run(context.Background(), []Check{slow, tight})
	if r := rep.Checks[0]; r.Status != finding.Pass {
		t.Errorf("slow check within its own 5s budget: %+v", r.Finding)
	}
	if r := rep.Checks[1]; r.Status != finding.Fail {
		t.Errorf("tight check past its own budget: %+v", r.Finding)
	}
}

// Nine checks skipped behind one unreachable BMC are one row: "not checked because ...", naming
// them; a check skipped alone keeps its own row; other targets and reasons stay apart.
func TestNotCheckedCollapsesPerTarget(t *testing.T) {
	skip := func(name, blocker string) Check {
		return Func(name, CategoryBMC, func(context.Context) finding.Finding {
			return finding.Warnf("fix "+blocker+" first", "not checked: %s failed", blocker)
		})
	}
	checks := []Check{
		Func("bmc cp-0 connect", CategoryBMC, func(context.Context) finding.Finding { return finding.Failf("check the address", "connection refused") }),
		skip("bmc cp-0 media", "connect"), skip("bmc cp-0 power", "connect"), skip("bmc cp-0 boot", "connect"),
		skip("bmc cp-1 media", "connect"),
		Func("bmc cp-1 connect", CategoryBMC, func(context.Context) finding.Finding { return finding.Failf("check the address", "timeout") }),
		Func("bmc cp-2 media", CategoryBMC, func(context.Context) finding.Finding { return finding.Passf("ok") }),
	}
	rep := Runner{Parallel: 1}.Run(context.Background(), checks)
	var got []string
	for _, c := range rep.Checks {
		got = append(got, c.Status.Label()+" "+c.Name+": "+c.Message)
	}
	want := []string{
		"FAIL bmc cp-0 connect: connection refused",
		"WARN bmc cp-0 (3 checks): not checked because connect failed: bmc cp-0 media, bmc cp-0 power, bmc cp-0 boot",
		"WARN bmc cp-1 media: not checked: connect failed",
		"FAIL bmc cp-1 connect: timeout",
		"PASS bmc cp-2 media: ok",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if rep.Summary != (Summary{Pass: 1, Warn: 2, Fail: 2}) {
		t.Errorf("summary %+v", rep.Summary)
	}
}
