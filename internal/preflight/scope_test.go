package preflight

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/finding"
)

// A BMC that does not answer and a missing DNS record fail preflight; a run of the stages before
// boot is not blocked by them (shown, counted as not blocking); a whole run is, and the error
// names the stages they block and the longest run from the first stage that would proceed.
func TestScopedToTheStagesThatRun(t *testing.T) {
	rep := Runner{}.Run(context.Background(), []Check{
		Func("bmc cp-0 reachable", CategoryBMC, func(context.Context) finding.Finding { return finding.Failf("Check the BMC.", "connection refused") }),
		Func("dns api.x", CategoryDNS, func(context.Context) finding.Finding {
			return finding.Failf("Add the record.", "api.x does not resolve")
		}),
		Func("disk /w", CategoryJumpHost, func(context.Context) finding.Finding { return finding.Passf("9 GiB free") }),
		Func("file gitops.credentials.password.file", CategoryFiles, func(context.Context) finding.Finding { return finding.Passf("ok") }),
	})
	all := []string{"preflight", StageMirror, StageISO, StageBoot, StageInstall, StageConfigure, StageHandoff}

	mirrorOnly := rep.Scoped([]string{"preflight", StageMirror})
	if err := mirrorOnly.Err(); err != nil {
		t.Errorf("a mirror-only run is blocked by checks only boot and install need: %v", err)
	}
	if s := mirrorOnly.Summary; s.Fail != 0 || s.NotBlocking != 2 || s.Pass != 2 {
		t.Errorf("summary %+v, want 2 passed, 0 failed, 2 not blocking", s)
	}
	var tb bytes.Buffer
	if err := WriteTable(&tb, mirrorOnly); err != nil {
		t.Fatal(err)
	}
	table := tb.String()
	for _, want := range []string{"FAIL (not blocking)  bmc", "boot ", "install,configure,handoff", "handoff ",
		"2 passed, 0 warning(s), 0 failed, 2 failed outside the stages selected (not blocking)"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}

	err := rep.Scoped(all).Err()
	var fe *FailedError
	if !errors.As(err, &fe) {
		t.Fatalf("a whole run with a BMC down passes preflight: %v", err)
	}
	if !slices.Equal(fe.Blocked, []string{StageBoot, StageInstall, StageConfigure, StageHandoff}) ||
		!slices.Equal(fe.Proceed, []string{"preflight", StageMirror, StageISO}) {
		t.Errorf("blocked %v, proceed %v", fe.Blocked, fe.Proceed)
	}
	if !strings.Contains(err.Error(), "(needed by boot, install, configure, handoff)") {
		t.Errorf("error: %v", err)
	}
	// a check preflight does not know is needed by every stage: nothing proceeds
	unknown := Runner{}.Run(context.Background(), []Check{
		Func("something new", Category("other"), func(context.Context) finding.Finding { return finding.Failf("Fix it.", "broken") }),
	}).Scoped([]string{"preflight", StageMirror})
	if !errors.As(unknown.Err(), &fe) || len(fe.Proceed) != 0 {
		t.Errorf("an unknown check's failure does not block every stage: %v", unknown.Err())
	}
}
