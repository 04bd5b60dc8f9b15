package report

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"strings"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
	"github.com/bootstrap-dev/bootstrap/internal/units"
)

//go:embed report.html.tmpl
var htmlTemplate string

// HTML writes the report as one self-contained HTML file (inline CSS, no scripts, no fetches),
// so it can be archived with the change record and opened anywhere.
func (r *Report) HTML(w io.Writer) error {
	t, err := template.New("report").Funcs(template.FuncMap{
		"ts":    ts,
		"bytes": units.Bytes,
		"json":  func(raw json.RawMessage) string { return cell(raw) },
		"full":  func(raw json.RawMessage) string { return string(raw) },
		"tsms": func(t time.Time) string {
			if t.IsZero() {
				return "-"
			}
			return t.UTC().Format("2006-01-02 15:04:05.000Z")
		},
		"secs":  func(f float64) string { return fmt.Sprintf("%.1f s", f) },
		"steps": stepsText,
		"short": func(s string) string {
			if len(s) > 19 {
				return s[:19] + "…"
			}
			return s
		},
		"command":    runCommand,
		"runBy":      runBy,
		"fields":     fields,
		"secretNote": func() string { return SecretNotHashed },
		"join":       func(ss []string) string { return strings.Join(ss, " ") },
		"inc":        func(i int) int { return i + 1 },
		"hopClass":   hopClass,
		"state": func(s pipeline.StageState) string {
			switch s {
			case pipeline.StateSucceeded:
				return "ok"
			case pipeline.StateFailed, pipeline.StateInterrupted:
				return "bad"
			}
			return "warn"
		},
		"runState": func(r pipeline.RunResult) string {
			switch r {
			case pipeline.RunSucceeded:
				return "ok"
			case pipeline.RunFailed, pipeline.RunKilled:
				return "bad"
			}
			return "warn"
		},
		"since": func(a, b time.Time) string {
			if a.IsZero() || b.IsZero() {
				return "-"
			}
			return b.Sub(a).Round(time.Millisecond).String()
		},
	}).Parse(htmlTemplate)
	if err != nil {
		return err
	}
	return t.Execute(w, r)
}
