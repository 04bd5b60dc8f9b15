package pipeline

import (
	"encoding/json"
	"time"
)

// EntryKind says what a journal entry records.
type EntryKind string

// Journal entry kinds. They are stable strings: the journal outlives any one binary version.
const (
	EntryRunStarted     EntryKind = "run-started"
	EntryRunFinished    EntryKind = "run-finished"
	EntryStageStarted   EntryKind = "stage-started"
	EntryStageSucceeded EntryKind = "stage-succeeded"
	EntryStageFailed    EntryKind = "stage-failed"
	EntryStageSkipped   EntryKind = "stage-skipped"
	EntryStageStale     EntryKind = "stage-stale"
	EntryStepDone       EntryKind = "step-done"
	EntryWarning        EntryKind = "warning"
)

// Entry is one line of the journal. Entries are small: stage outputs and step data are what
// stages hand to the runner (references, digests, hashes, counts), never secret values; large
// content belongs in a file in the work dir whose path and hash go into the entry.
type Entry struct {
	// Seq counts entries from 1 without gaps; VerifyChain names entries by it.
	Seq  int64     `json:"seq"`
	Time time.Time `json:"time"`
	Kind EntryKind `json:"kind"`
	// Run is the seq of the run-started entry of the run that wrote this entry.
	Run   int64  `json:"run,omitempty"`
	Stage string `json:"stage,omitempty"`
	Step  string `json:"step,omitempty"`
	// Attempt numbers a stage's attempts: it grows when a stage starts afresh (first run, input
	// change, stale, replay, --from) and stays when an interrupted or failed attempt resumes.
	Attempt int `json:"attempt,omitempty"`
	// Fingerprint is "sha256:<hex>" of the JSON of the stage's inputs.
	Fingerprint string `json:"fingerprint,omitempty"`
	// Data is the stage output (stage-succeeded), the step data (step-done) or run details.
	Data json.RawMessage `json:"data,omitempty"`
	// Reason explains a skip, a stale mark or a fresh attempt, for people reading status.
	Reason string `json:"reason,omitempty"`
	Error  string `json:"error,omitempty"`
	Remedy string `json:"remedy,omitempty"`
	// Prev is the hex SHA-256 of the previous line's bytes (without its newline); empty for seq 1.
	Prev string `json:"prev"`
}

// RunInfo is the data of a run-started entry.
type RunInfo struct {
	Command string   `json:"command,omitempty"`
	Version string   `json:"version,omitempty"`
	Host    string   `json:"host,omitempty"`
	User    string   `json:"user,omitempty"` // the login that ran it (uid when it has no name)
	PID     int      `json:"pid,omitempty"`
	Mode    string   `json:"mode"` // run, replay
	From    string   `json:"from,omitempty"`
	Until   string   `json:"until,omitempty"`
	Stage   string   `json:"stage,omitempty"` // replay
	Nodes   []string `json:"nodes,omitempty"` // replay --node
}

// nodeStepPrefix marks step keys that belong to one node (see NodeStep).
const nodeStepPrefix = "node:"

// NodeStep returns the step key for an action on one node, e.g. NodeStep("w1", "insert-media")
// is "node:w1/insert-media". Status groups such steps by node.
func NodeStep(node, action string) string {
	return nodeStepPrefix + node + "/" + action
}

// stepNode returns the node a step key names, or "".
func stepNode(key string) string {
	if len(key) <= len(nodeStepPrefix) || key[:len(nodeStepPrefix)] != nodeStepPrefix {
		return ""
	}
	rest := key[len(nodeStepPrefix):]
	for i := 0; i < len(rest); i++ {
		if rest[i] == '/' {
			return rest[:i]
		}
	}
	return rest
}
