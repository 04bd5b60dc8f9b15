package pipeline

import "fmt"

// Reasons the resume rule gives.
const (
	reasonSkip     = "finished with the same inputs"
	reasonVerified = "; verified"
)

// resumeReason is the resume rule (DESIGN.md, "The journal"), the one place Run and Plan decide
// whether a stage runs. A stage is skipped only when its last entry succeeded, its input
// fingerprint fp is the one of that success and verify (nil when the stage has no Verify) still
// holds; stale is why an earlier stage makes it run anyway (Plan's foresight of what Run journals as
// stale; Run passes ""). It returns "" to skip, else why the stage runs, and verify's error as
// verr (the caller decides whether an interrupted verify fails the stage).
func resumeReason(prev StageStatus, fp string, replay, always bool, stale string, verify func() error) (why string, verr error) {
	switch {
	case replay:
		return "replay requested", nil
	case always:
		return "runs on every pass (read-only)", nil
	case prev.State == StatePending:
		return "first run", nil
	case prev.State != StateSucceeded:
		return fmt.Sprintf("last attempt %s", prev.State), nil
	case prev.SucceededFingerprint != fp:
		return "inputs changed since it last succeeded", nil
	case stale != "":
		return stale, nil
	case verify != nil:
		if verr := verify(); verr != nil {
			return "verify: " + verr.Error(), verr
		}
	}
	return "", nil
}

// skipReason is what a skipped stage journals (and Plan shows).
func skipReason(verified bool) string {
	if verified {
		return reasonSkip + reasonVerified
	}
	return reasonSkip
}

// staleLater says whether running a stage with fingerprint fp makes the later stages stale: it runs
// with inputs other than those of its last success (or never succeeded). An AlwaysRunner never
// stales anything (it is read-only).
func staleLater(prev StageStatus, fp string, always bool) bool {
	return !always && (prev.SucceededFingerprint == "" || prev.SucceededFingerprint != fp)
}
