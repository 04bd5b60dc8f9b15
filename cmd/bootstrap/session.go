package main

import (
	"errors"
	"fmt"
	"github.com/bootstrap-dev/bootstrap/internal/isoserver"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
	"github.com/bootstrap-dev/bootstrap/internal/progress"
	"github.com/bootstrap-dev/bootstrap/internal/site"
	"github.com/bootstrap-dev/bootstrap/internal/stages"
)

// loadSite loads and validates the profile named by -f. Problems are printed (text or JSON);
// an invalid profile returns an error that maps to exit code 3. Warnings are shown and allowed.
func (g *globals) loadSite() (*site.Site, error) {
	if err := g.needFile(); err != nil {
		return nil, err
	}
	s, ps, err := site.LoadValidated(g.file, site.RefusePlaceholders())
	addSiteSecrets(g.scrub, s)
	if err != nil {
		if p, ok := site.AsProblems(err); ok {
			ps = p
		} else if site.IsInvalid(err) {
			return nil, err
		} else { // not there, unreadable: input that cannot be used (exit 3), not a failure
			return nil, inputError{fmt.Errorf("%w\nremedy: check the path given with -f, or write a profile with "+
				"`bootstrap init --profile lab`", err)}
		}
	}
	switch {
	case len(ps) == 0:
	case g.json() && err != nil:
		if j := jsonOut(g.cmd); j != nil {
			jsonProblems(g.cmd, j, g.file, ps, nil, "")
		}
	default: // text, or -o json with warnings only: text on stderr, the command goes on
		_ = ps.Format(g.stderr)
	}
	if err != nil {
		// Every problem is shown above; the error itself only carries the exit code.
		return nil, err
	}
	return s, nil
}

// session is one command's runner with its renderer and log file. It owns the ISO server the
// stages share: started by whichever stage first needs it, stopped when the command ends.
type session struct {
	runner   *pipeline.Runner
	renderer progress.Renderer
	logFile  *os.File
	iso      *isoserver.Server
}

func (s *session) Close() {
	if s.iso != nil {
		s.iso.Close()
	}
	if s.renderer != nil {
		_ = s.renderer.Close()
	}
	if s.logFile != nil {
		_ = s.logFile.Close()
	}
}

// newSession builds the runner for the site with every stage, events rendered on the right
// stream (JSON events on stdout with --output json; bars or lines on stderr otherwise) and a
// debug log in the work dir.
func (g *globals) newSession(s *site.Site, command string) (*session, error) {
	dir, err := g.workDir()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("work dir %s: %w", dir, err)
	}
	var (
		w      io.Writer = g.stderr
		format           = progress.Auto
	)
	if g.json() {
		w, format = g.stdout, progress.JSON
	}
	r, err := progress.New(w, format)
	if err != nil {
		return nil, err
	}
	lf, err := os.OpenFile(filepath.Join(dir, "bootstrap.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("log file: %w", err)
	}
	addSiteSecrets(g.scrub, s)
	red := redactor{g.scrub}
	level, err := g.level(g.cmd)
	if err != nil {
		_ = lf.Close()
		return nil, err
	}
	var logTo slog.Handler = slog.NewTextHandler(red.Writer(lf), &slog.HandlerOptions{Level: slog.LevelDebug})
	if level <= slog.LevelDebug && !g.json() { // --log-level debug: the debug log on stderr too
		logTo = slog.NewMultiHandler(logTo, slog.NewTextHandler(g.stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	log := slog.New(logTo)
	sink := func(e pipeline.Event) {
		if g.json() || shown(e, level) { // -o json: every event, for scripts
			r.Handle(e)
		}
	}
	iso := &isoserver.Server{}
	return &session{
		iso: iso,
		runner: &pipeline.Runner{
			Stages:  g.stageList(iso),
			Site:    s,
			WorkDir: dir,
			Sink:    func(e pipeline.Event) { sink(red.Event(e)) },
			Log:     log,
			Command: command,
			Version: buildInfo().Version,
			Scrub:   red.Bytes,

			AcceptTail: g.acceptTail,
		},
		renderer: r,
		logFile:  lf,
	}, nil
}

// stageNames lists the stages for help text, from the stage table.
func stageNames() string { return strings.Join(stages.Names(), ", ") }

// stageHelp is one line per stage, from the stage table: its summary, what it needs, and
// whether --node applies.
func stageHelp() string {
	var b strings.Builder
	for _, i := range stages.Table() {
		var notes []string
		if len(i.Needs) > 0 {
			notes = append(notes, "needs "+strings.Join(i.Needs, ", "))
		}
		if i.NodeScoped {
			notes = append(notes, "--node")
		}
		fmt.Fprintf(&b, "  %-10s %s", i.Name, i.Summary)
		if len(notes) > 0 {
			fmt.Fprintf(&b, " [%s]", strings.Join(notes, "; "))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// isLocked reports a run lock held by someone else.
func isLocked(err error) bool {
	var le *pipeline.LockedError
	return errors.As(err, &le)
}
