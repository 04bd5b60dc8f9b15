package progress

import (
	"fmt"
	"strings"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
)

// Verdict is a sentence the console or the report may print about what is done, with the check
// that must hold for it to be printed. No other success sentence is printed anywhere: the
// README's table "What the console says, and the check behind it" is this list.
type Verdict struct {
	Says  string // the words, with STAGE, DURATION, ... standing for what varies
	Check string // what was checked, and when
}

// Verdicts is every success sentence, in the order a run prints them.
func Verdicts() []Verdict {
	return []Verdict{
		{"✓ STAGE succeeded in DURATION", "the stage ran in this command and the runner journaled its success " +
			"(its Run returned no error and its output has the declared type); plain lines say `STAGE succeeded: DURATION`"},
		{"↷ STAGE " + doneEarlier + ": finished with the same inputs", "nothing checked now: the journal's last attempt " +
			"succeeded with the same input fingerprint, and the stage has no Verify"},
		{"↷ STAGE " + doneEarlier + ": finished with the same inputs; verified", "as above, and the stage's Verify " +
			"held in this command (install: ClusterVersion Available; configure: every manifest applied equal; ...)"},
		{"done: every stage succeeded", "run over every stage (no --from/--until) returned no error, and the journal " +
			"read after it says every stage's last attempt succeeded"},
		{"done: STAGES succeeded as asked; not run: STAGES", "run --from/--until returned no error; the stages outside " +
			"the window are named, never called done"},
		{"done: replay STAGE succeeded", "replay returned no error; later stages are as `bootstrap status` says"},
		{"The cluster is ready:", "install succeeded in this command, or was found done with its Verify holding " +
			"(ClusterVersion Available) in this command"},
		{"The cluster, as install journaled it at TIME (not checked now):", "install's last attempt succeeded in the " +
			"journal, and nothing in this command asked the cluster (status, or a run outside install)"},
		{"last run: COMMAND at TIME, succeeded", "the run's run-finished entry carries no error"},
		{"complete: every stage succeeded (as journaled)", "report: every stage's last attempt succeeded in the journal"},
	}
}

// doneEarlier is how a stage found finished in the journal is named: never "ready" or
// "succeeded", which would claim this command saw it happen.
const doneEarlier = "done earlier (journaled)"

// verifiedSuffix ends the reason the runner journals for a skipped stage whose Verify held.
const verifiedSuffix = "; verified"

// SkipVerified reports whether a stage-skipped reason says its Verify held in that run.
func SkipVerified(reason string) bool { return strings.HasSuffix(reason, verifiedSuffix) }

// RunVerdict is the closing line of a run that returned no error, from the journal read after
// it: "done: every stage succeeded" only when the window was every stage and the journal agrees;
// otherwise the stages it covered and those it did not run.
func RunVerdict(st pipeline.Status, names []string, from, until string) string {
	first, last := 0, len(names)-1
	for i, n := range names {
		if n == from {
			first = i
		}
		if n == until {
			last = i
		}
	}
	var notDone []string
	for _, n := range names {
		if st.Stage(n).State != pipeline.StateSucceeded {
			notDone = append(notDone, n)
		}
	}
	if first == 0 && last == len(names)-1 && len(notDone) == 0 {
		return "done: every stage succeeded; `bootstrap status` shows the details"
	}
	window := names[first : last+1]
	s := fmt.Sprintf("done: %s succeeded as asked", span(window))
	var outside []string
	for _, n := range notDone {
		if !contains(window, n) {
			outside = append(outside, n)
		}
	}
	if len(outside) > 0 {
		s += fmt.Sprintf("; not run: %s (outside %s); `bootstrap run` runs the rest", strings.Join(outside, ", "), windowFlags(from, until))
	}
	return s
}

// ReplayVerdict is the closing line of a replay that returned no error.
func ReplayVerdict(stage string, nodes []string) string {
	s := "done: replay " + stage + " succeeded"
	if len(nodes) > 0 {
		s += " on " + strings.Join(nodes, ", ")
	}
	return s + "; `bootstrap status` shows the later stages"
}

// ClusterHeading is the line above the cluster's access: "The cluster is ready:" only when
// checkedNow (install ran or verified in this command), else what the journal says and when.
func ClusterHeading(checkedNow bool, journaled time.Time) string {
	if checkedNow {
		return "The cluster is ready:"
	}
	return fmt.Sprintf("The cluster, as install journaled it at %s (not checked now; `bootstrap run --from install` checks it):",
		journaled.Local().Format(time.DateTime))
}

// LastRunState is how status names the last run's end: succeeded, failed, interrupted, or
// running/killed when it has no end.
func LastRunState(r pipeline.RunSummary, locked bool) string {
	switch {
	case r.Ended && r.Error == "":
		return "succeeded"
	case r.Ended && strings.Contains(r.Error, "interrupted"):
		return "interrupted: " + firstLineOf(r.Error)
	case r.Ended:
		return "failed: " + firstLineOf(r.Error)
	case locked:
		return "running now"
	}
	return "stopped without an end (killed or power loss)"
}

func span(names []string) string {
	if len(names) == 1 {
		return names[0]
	}
	return names[0] + ".." + names[len(names)-1]
}

func windowFlags(from, until string) string {
	var f []string
	if from != "" {
		f = append(f, "--from "+from)
	}
	if until != "" {
		f = append(f, "--until "+until)
	}
	return strings.Join(f, " ")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
