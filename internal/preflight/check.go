package preflight

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// Category groups checks by what they touch. Categories are stable lower-case words; they appear
// in the table and in JSON.
type Category string

// Categories, in the order results are shown.
const (
	CategoryJumpHost Category = "jumphost"
	CategoryFiles    Category = "files"
	CategoryDNS      Category = "dns"
	CategoryNTP      Category = "ntp"
	CategoryNetwork  Category = "network"
	CategoryRegistry Category = "registry"
	CategoryBMC      Category = "bmc"
	CategoryGit      Category = "git"
)

// categoryRank orders categories for display; unknown categories sort last, in the order given.
func categoryRank(c Category) int {
	switch c {
	case CategoryJumpHost:
		return 0
	case CategoryFiles:
		return 1
	case CategoryDNS:
		return 2
	case CategoryNTP:
		return 3
	case CategoryNetwork:
		return 4
	case CategoryRegistry:
		return 5
	case CategoryBMC:
		return 6
	case CategoryGit:
		return 7
	}
	return 100
}

// Status is the verdict of one check.
type Status int

// Statuses, from best to worst. The zero value is Pass so that a Result built with only a
// Message reads as a pass; checks that fail must say so.
const (
	Pass Status = iota
	Warn
	Fail
)

// String returns PASS, WARN or FAIL.
func (s Status) String() string {
	switch s {
	case Pass:
		return "PASS"
	case Warn:
		return "WARN"
	case Fail:
		return "FAIL"
	}
	return fmt.Sprintf("Status(%d)", int(s))
}

// MarshalJSON writes the status as "pass", "warn" or "fail".
func (s Status) MarshalJSON() ([]byte, error) {
	switch s {
	case Pass:
		return []byte(`"pass"`), nil
	case Warn:
		return []byte(`"warn"`), nil
	case Fail:
		return []byte(`"fail"`), nil
	}
	return nil, fmt.Errorf("preflight: unknown status %d", int(s))
}

// UnmarshalJSON reads "pass", "warn" or "fail" (so a journaled report reads back).
func (s *Status) UnmarshalJSON(b []byte) error {
	var v string
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	switch v {
	case "pass":
		*s = Pass
	case "warn":
		*s = Warn
	case "fail":
		*s = Fail
	default:
		return fmt.Errorf("preflight: unknown status %q", v)
	}
	return nil
}

// Result is what one check found.
type Result struct {
	Status Status `json:"status"`
	// Message says what was seen ("api.lab.example.test → 10.0.0.5 (10.0.0.53:53)").
	Message string `json:"message"`
	// Remedy says what to do about a Warn or Fail; empty on Pass.
	Remedy string `json:"remedy,omitempty"`
	// Duration is how long the check ran; the runner fills it in.
	Duration time.Duration `json:"-"`
}

// Check is one read-only check. Implementations must honour ctx (the runner cancels it at the
// check's timeout), must not change anything, and must be safe to run concurrently with other
// checks.
type Check interface {
	// Name identifies the check in output; it is unique within a run and stable across runs
	// ("dns api.lab.example.test", "ntp 10.0.0.1").
	Name() string
	// Category says what the check touches.
	Category() Category
	// Run performs the check.
	Run(ctx context.Context) Result
}

// TimeoutCheck is a Check that needs a different time budget than the runner's default (a Git
// fetch takes longer than a DNS query). The runner uses its Timeout when it is positive.
type TimeoutCheck interface {
	Check
	Timeout() time.Duration
}

// withTimeout gives c its own time budget.
func withTimeout(c Check, d time.Duration) Check { return timeoutCheck{Check: c, d: d} }

type timeoutCheck struct {
	Check
	d time.Duration
}

func (t timeoutCheck) Timeout() time.Duration { return t.d }

// Func makes a Check from a function.
func Func(name string, cat Category, run func(ctx context.Context) Result) Check {
	return funcCheck{name: name, cat: cat, run: run}
}

type funcCheck struct {
	name string
	cat  Category
	run  func(ctx context.Context) Result
}

func (f funcCheck) Name() string                   { return f.name }
func (f funcCheck) Category() Category             { return f.cat }
func (f funcCheck) Run(ctx context.Context) Result { return f.run(ctx) }

// Passf, Warnf and Failf build Results; remedy may be empty for Passf.
func Passf(format string, args ...any) Result {
	return Result{Status: Pass, Message: fmt.Sprintf(format, args...)}
}

// Warnf builds a Warn result with a remedy.
func Warnf(remedy, format string, args ...any) Result {
	return Result{Status: Warn, Message: fmt.Sprintf(format, args...), Remedy: remedy}
}

// Failf builds a Fail result with a remedy.
func Failf(remedy, format string, args ...any) Result {
	return Result{Status: Fail, Message: fmt.Sprintf(format, args...), Remedy: remedy}
}
