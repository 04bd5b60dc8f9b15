package main

import (
	"context"
	"errors"

	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
)

// Exit codes scripts can trust.
const (
	exitOK        = 0
	exitFailure   = 1
	exitPreflight = 2
	exitInvalid   = 3
	exitLocked    = 4
	exitPartial   = 5 // gather: the tarball was written, some sources failed (its index lists them)
	// exitIntegrity: the journal was edited, truncated (rolled back) or extended outside
	// bootstrap; run refuses it, status and report say so.
	exitIntegrity = 6
	// exitInterrupted: Ctrl-C or SIGTERM stopped the command (128 + SIGINT, as a shell reports a
	// process killed by it); a run journaled where it stopped and continues from there.
	exitInterrupted = 130
)

// exitRow is one row of the exit-code table: the README's table is exitTable, kept equal by a
// test that also drives a command to each code.
type exitRow struct {
	Code    int
	Meaning string
	When    string // which commands, on what
}

// exitTable is every exit code any command returns.
func exitTable() []exitRow {
	return []exitRow{
		{exitOK, "ok", "every command that did what it was asked; `serve` stopped by Ctrl-C or SIGTERM (its normal end)"},
		{exitFailure, "failure", "a stage failed (run, replay, iso), a command's own work failed (mirror, gather without a tarball); " +
			"a usage error: an unknown flag, stage, node, output format or log level, no `-f` where one is needed"},
		{exitPreflight, "preflight failed", "`preflight` with a FAIL; `run` whose preflight stage found a FAIL blocking the stages selected"},
		{exitInvalid, "invalid input", "every command given `-f` (validate, plan, run, replay, status, report, iso, serve, gather, " +
			"preflight) on a profile that is missing, unreadable or invalid; `mirror -c` on an invalid ImageSetConfiguration"},
		{exitLocked, "work dir locked", "run, replay, iso, gather or serve while another command holds the work dir (the message names its host, pid and command)"},
		{exitPartial, "partial", "`gather` wrote its tarball but some sources failed (its index.txt lists them)"},
		{exitIntegrity, "journal integrity failure", "status, report and run on a journal edited, truncated (rolled back), " +
			"extended outside bootstrap, or left without its witness `journal.head`"},
		{exitInterrupted, "interrupted", "Ctrl-C or SIGTERM during run, replay or iso (the journal keeps every finished step; " +
			"run again to continue); any other command killed by SIGINT gets 130 from the shell as well"},
	}
}

// integrityError is a journal integrity failure already shown (status, report).
type integrityError struct{ error }

func (e integrityError) Unwrap() error { return e.error }

// isIntegrity reports a journal integrity failure: a broken hash chain or an end that does not
// match its witness.
func isIntegrity(err error) bool {
	var ce *pipeline.ChainError
	var te *pipeline.TailError
	var ie integrityError
	return errors.As(err, &ce) || errors.As(err, &te) || errors.As(err, &ie)
}

// inputError is input that cannot be used: a site profile that is not there or cannot be read
// (exit 3, as an invalid one).
type inputError struct{ error }

func (e inputError) Unwrap() error { return e.error }

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
	if errors.Is(err, context.Canceled) {
		return exitInterrupted
	}
	if c, ok := domainExitCode(err); ok {
		return c
	}
	return exitFailure
}

// quiet wraps an error that a message already summarizes: %w of it adds no text, and errors.As
// still finds it (for the exit code).
type quiet struct{ err error }

func (q quiet) Error() string { return "" }
func (q quiet) Unwrap() error { return q.err }

// remedyError gives err a remedy of the command's own (the narrower run that proceeds) in front of
// the remedies err carries: the text ends with it, and -o json's result line carries it.
type remedyError struct {
	err    error
	remedy string
}

func (e remedyError) Error() string  { return e.err.Error() + "\nremedy: " + e.remedy }
func (e remedyError) Unwrap() error  { return e.err }
func (e remedyError) Remedy() string { return e.remedy }
