package report

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"time"
)

//go:embed report.html.tmpl
var htmlTemplate string

// HTML writes the report as one self-contained HTML file (inline CSS, no scripts, no fetches),
// so it can be archived with the change record and opened anywhere.
func (r *Report) HTML(w io.Writer) error {
	t, err := template.New("report").Funcs(template.FuncMap{
		"ts":    ts,
		"bytes": humanBytes,
		"json":  func(raw json.RawMessage) string { return cell(raw) },
		"secs":  func(f float64) string { return fmt.Sprintf("%.1f s", f) },
		"short": func(s string) string {
			if len(s) > 19 {
				return s[:19] + "…"
			}
			return s
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

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
