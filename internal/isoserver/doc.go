// Package isoserver is the ISO HTTP server of a run: it serves the agent ISO the iso stage built
// (and each node's customized view of it) while nodes may read it, attributes every read to a
// node (per-node URL tokens, or the reader's BMC address), and keeps those reads as the evidence
// that a node booted its ISO after its power action.
//
// The reads survive the process: each is appended to ReadLog in the work dir and loaded again
// by the next process's server, so a run resumed after a kill still knows which nodes read their
// ISO. The token key (TokenKeyFile) lives in the work dir too, so a node's URL is the same on
// every run. The server is owned by the command's session, not by a stage; the stage adapters
// (internal/stages) call Ensure and Evidence. The package never imports the pipeline.
package isoserver
