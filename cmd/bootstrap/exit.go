package main

import "errors"

// Exit codes scripts can trust.
const (
	exitOK        = 0
	exitFailure   = 1
	exitPreflight = 2
	exitInvalid   = 3
	exitLocked    = 4
	exitPartial   = 5 // gather: the tarball was written, some sources failed (its index lists them)
)

// usageError is a mistake in the command line itself.
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

// silentError carries an exit code for an outcome that was already shown to the user.
type silentError struct{ code int }

func (e silentError) Error() string { return "exit status" }

func silent(err error) bool {
	var s silentError
	return errors.As(err, &s)
}

// exitCode maps an error to the documented exit codes. Only cmd/ chooses exit codes.
func exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	var s silentError
	if errors.As(err, &s) {
		return s.code
	}
	if c, ok := domainExitCode(err); ok {
		return c
	}
	return exitFailure
}
