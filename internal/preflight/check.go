package preflight

import (
	"context"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/finding"
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
	Run(ctx context.Context) finding.Finding
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
func Func(name string, cat Category, run func(ctx context.Context) finding.Finding) Check {
	return funcCheck{name: name, cat: cat, run: run}
}

type funcCheck struct {
	name string
	cat  Category
	run  func(ctx context.Context) finding.Finding
}

func (f funcCheck) Name() string                            { return f.name }
func (f funcCheck) Category() Category                      { return f.cat }
func (f funcCheck) Run(ctx context.Context) finding.Finding { return f.run(ctx) }
