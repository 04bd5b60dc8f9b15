package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
)

// The -o json contract, the same for every command: stdout carries JSON lines only, one document
// a line, each with a "kind" (event kinds of run and replay, "problem", "check", "plan",
// "source", "fetch", "progress", ...), and the last line is always the command's result:
//
//	{"kind":"result","command":"validate","ok":false,"exitCode":3,"error":"...","data":{...}}
//
// Text warnings and errors go to stderr. Execute writes the result line, from the data the
// command left with setResult and the error it returned, so a failure before the command ran
// (a bad flag, an invalid profile) ends with a result line too.

// Result is the last line of every command's -o json output.
type Result struct {
	Kind     string `json:"kind"` // always "result"
	Command  string `json:"command"`
	OK       bool   `json:"ok"`
	ExitCode int    `json:"exitCode"`
	Error    string `json:"error,omitempty"`
	Remedy   string `json:"remedy,omitempty"`
	Data     any    `json:"data,omitempty"`
}

// jsonLines writes the JSON lines of one command; safe for concurrent use.
type jsonLines struct {
	mu      sync.Mutex
	w       io.Writer
	command string
	data    any
}

// line writes v as one line with "kind" first. v must encode as a JSON object (or be nil).
func (j *jsonLines) line(kind string, v any) {
	b, err := json.Marshal(v)
	if err != nil || len(b) < 2 || b[0] != '{' {
		b = []byte("{}")
	}
	var buf bytes.Buffer
	buf.WriteString(`{"kind":`)
	k, _ := json.Marshal(kind)
	buf.Write(k)
	if body := bytes.TrimSpace(b[1 : len(b)-1]); len(body) > 0 {
		buf.WriteByte(',')
		buf.Write(body)
	}
	buf.WriteString("}\n")
	j.mu.Lock()
	defer j.mu.Unlock()
	_, _ = j.w.Write(buf.Bytes())
}

// encode writes v (which carries its own "kind", like a pipeline.Event) as one line.
func (j *jsonLines) encode(v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	_, _ = j.w.Write(buf.Bytes())
}

// result writes the final line for err (nil: success) with the data the command set.
func (j *jsonLines) result(err error, code int) {
	r := Result{Kind: "result", Command: j.command, OK: err == nil, ExitCode: code, Data: j.data}
	if err != nil && !silent(err) {
		msg, remedy, _ := strings.Cut(err.Error(), "\nremedy: ")
		r.Error, r.Remedy = msg, remedy
		var rm pipeline.Remedier
		if errors.As(err, &rm) && rm.Remedy() != "" {
			r.Remedy = rm.Remedy()
		}
	}
	j.encode(r)
}

type outputKey struct{}

// jsonOut is the command's JSON-lines writer when -o json was asked for, else nil. Commands
// built outside Execute (tests of one command) get a writer on their own stdout.
func jsonOut(cmd *cobra.Command) *jsonLines {
	if cmd == nil || flagValue(cmd, "output") != "json" {
		return nil
	}
	if ctx := cmd.Context(); ctx != nil {
		if j, ok := ctx.Value(outputKey{}).(*jsonLines); ok {
			return j
		}
	}
	return &jsonLines{w: cmd.OutOrStdout(), command: cmd.Name()}
}

// setResult leaves data for the result line (with -o json; a no-op otherwise). A command run
// outside Execute (a test of the command alone) has nobody to finish its output: its result line
// is written here.
func setResult(cmd *cobra.Command, data any) {
	j := jsonOut(cmd)
	if j == nil {
		return
	}
	j.mu.Lock()
	j.data = data
	j.mu.Unlock()
	if cmd.Context() == nil || cmd.Context().Value(outputKey{}) == nil {
		j.result(nil, exitOK)
	}
}

// withJSONLines puts the writer where every command finds it.
func withJSONLines(ctx context.Context, j *jsonLines) context.Context {
	return context.WithValue(ctx, outputKey{}, j)
}
