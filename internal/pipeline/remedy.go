package pipeline

import "errors"

// Remedier is the remedy contract: an error that knows what the field engineer should do about it
// says so with a Remedy method. The runner journals the remedy of the first error in a failed
// stage's chain that has one (errors.As, so wrapping keeps it), and `bootstrap status` shows it;
// a failure without one gets a generic "fix the cause, then run again".
//
// Domain packages implement it without importing this package (bmc.Error, mirror.RegistryError,
// preflight.FailedError); a remedy kept in a field only would reach the journal inside the error
// text, never as the remedy. remedy_test.go walks the domain packages to hold every error type to it.
type Remedier interface {
	Remedy() string
}

// remedyOf finds a remedy in err's chain.
func remedyOf(err error) string {
	var rem Remedier
	if errors.As(err, &rem) {
		return rem.Remedy()
	}
	return ""
}
