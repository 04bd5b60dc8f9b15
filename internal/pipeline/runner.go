package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/user"
	"regexp"
	"strings"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// Runner runs stages in order against one work dir, journaling everything and resuming from the
// journal. The zero Sink and Log discard.
type Runner struct {
	Stages  []Stage
	Site    *site.Site
	WorkDir string // absolute path of the work dir (.bootstrap/); holds the journal and the lock
	Sink    Sink
	Log     *slog.Logger
	// Command and Version are recorded in the lock and in each run-started entry.
	Command string
	Version string
	// Scrub, when set, rewrites journaled data, outputs and error texts (JSON in, JSON out) as a
	// last line of defence against secrets. Stages must not hand secrets to the runner anyway.
	Scrub func([]byte) []byte
	// AcceptTail continues from a journal whose end does not match its witness (rolled back,
	// edited or extended; see TailError) instead of refusing to run. What the missing entries
	// recorded is then done again. The runner journals a warning saying so.
	AcceptTail bool
}

// RunOptions limit a run to a window of stages. The resume rule applies inside the window.
type RunOptions struct {
	From  string // first stage to consider; earlier stages are neither run nor checked
	Until string // last stage to consider
}

// StageError is a stage's failure as Run and Replay return it. It unwraps to the stage's error
// (context.Canceled when interrupted) so cmd/ can branch with errors.Is/As.
type StageError struct {
	Stage  string
	Err    error
	remedy string
}

// Remedy is the remedy journaled with the failure: the stage error's own (Remedier) or a generic one.
func (e *StageError) Remedy() string { return e.remedy }

// Error is "stage NAME: cause".
func (e *StageError) Error() string { return fmt.Sprintf("stage %s: %v", e.Stage, e.Err) }

// Unwrap returns the stage's error.
func (e *StageError) Unwrap() error { return e.Err }

// Fingerprint is "sha256:" and the hex SHA-256 of the JSON encoding of v.
func Fingerprint(v any) (string, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("fingerprint: %w", err)
	}
	sum := sha256.Sum256(raw)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// StageNames lists the runner's stages in order (for help text and argument completion).
func (r *Runner) StageNames() []string {
	names := make([]string, len(r.Stages))
	for i, s := range r.Stages {
		names[i] = s.Name()
	}
	return names
}

// UsageError is a request the runner refuses before it opens the journal: an unknown stage or
// node, an empty --from/--until window. Nothing was changed.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

func (r *Runner) index(name string) (int, error) {
	for i, s := range r.Stages {
		if s.Name() == name {
			return i, nil
		}
	}
	return -1, &UsageError{Err: fmt.Errorf("unknown stage %q: the stages are %s", name, strings.Join(r.StageNames(), ", "))}
}

func (r *Runner) log() *slog.Logger {
	if r.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return r.Log
}

// emit sends an event, stamping the time.
func (r *Runner) emit(e Event) {
	if r.Sink == nil {
		return
	}
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	r.Sink(e)
}

// stageSink is the sink a stage sees: it fills in the stage name and time, and scrubs messages
// like journaled text.
func (r *Runner) stageSink(stage string) Sink {
	return func(e Event) {
		if e.Stage == "" {
			e.Stage = stage
		}
		if e.Message != "" {
			e.Message = r.scrubText(e.Message)
		}
		r.emit(e)
	}
}

// session is one locked, open journal.
type session struct {
	r    *Runner
	j    *Journal
	lock *Lock
	run  int64
}

// open takes the lock, opens the journal (dropping a torn tail) and records run-started.
func (r *Runner) open(info RunInfo) (*session, error) {
	if r.WorkDir == "" {
		return nil, errors.New("runner: no work dir")
	}
	lock, err := AcquireLock(r.WorkDir, r.Command)
	if err != nil {
		return nil, err
	}
	j, warnings, err := OpenJournalWith(JournalPath(r.WorkDir), JournalOptions{AcceptTail: r.AcceptTail})
	if err != nil {
		lock.Release()
		return nil, err
	}
	s := &session{r: r, j: j, lock: lock}
	if lock.TookOver != "" {
		warnings = append(warnings, lock.TookOver)
	}
	host, _ := os.Hostname()
	info.Command, info.Version, info.Host, info.PID = r.Command, r.Version, host, os.Getpid()
	info.User = currentUser()
	data, _ := json.Marshal(info)
	e, err := j.Append(Entry{Kind: EntryRunStarted, Data: data})
	if err != nil {
		s.close()
		return nil, err
	}
	s.run = e.Seq
	for _, w := range warnings {
		s.warn("", w)
	}
	return s, nil
}

// warn journals and shows a warning (journal errors are logged: a warning must not stop a run).
func (s *session) warn(stage, msg string) {
	if _, err := s.j.Append(Entry{Kind: EntryWarning, Run: s.run, Stage: stage, Error: msg}); err != nil {
		s.r.log().Warn("journal warning", "err", err)
	}
	s.r.emit(Event{Kind: Warning, Stage: stage, Message: msg})
}

// finish records run-finished and releases everything. It runs even after cancellation.
func (s *session) finish(runErr error) {
	e := Entry{Kind: EntryRunFinished, Run: s.run}
	if runErr != nil {
		e.Error = s.r.scrubText(runErr.Error())
	}
	if _, err := s.j.Append(e); err != nil {
		s.r.log().Warn("journal run-finished", "err", err)
	}
	s.close()
}

func (s *session) close() {
	s.j.Close()
	if err := s.lock.Release(); err != nil {
		s.r.log().Warn("release lock", "err", err)
	}
}

// userinfo matches credentials embedded in URLs (scheme://user:password@host).
var userinfo = regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.-]*://)[^/@\s:]+:[^/@\s]*@`)

// scrubText removes URL credentials from error text and applies Scrub.
func (r *Runner) scrubText(s string) string {
	s = userinfo.ReplaceAllString(s, "${1}REDACTED@")
	if r.Scrub == nil {
		return s
	}
	raw, _ := json.Marshal(s)
	var out string
	if json.Unmarshal(r.Scrub(raw), &out) != nil {
		return "(error text withheld: scrub failed)"
	}
	return out
}

// currentUser is the login name running this process, for the run's record ("uid N" when the
// account has no name, e.g. in a container).
func currentUser() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return fmt.Sprintf("uid %d", os.Getuid())
}
