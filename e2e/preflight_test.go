//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/bootstrap-dev/bootstrap/e2e/lab/harness"
	"github.com/bootstrap-dev/bootstrap/internal/preflight"
)

// The built binary's preflight (as in make e2e: bin/bootstrap or $BOOTSTRAP_BIN) passes against the lab (exit 0) and fails with exit 2, naming the
// NTP source, when the lab's clock is skewed.
func TestPreflightAgainstLab(t *testing.T) {
	bin := binary(t)
	for _, tc := range []struct {
		offset time.Duration
		code   int
	}{{0, 0}, {10 * time.Minute, 2}} {
		l, err := harness.New(t.TempDir(), harness.Default(harness.Options{NTPOffset: tc.offset})...)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Up(context.Background()); err != nil {
			t.Fatal(err)
		}
		var out, stderr bytes.Buffer
		cmd := exec.Command(bin, "preflight", "-f", l.SiteFile, "--output", "json", "--min-free-gib", "1")
		cmd.Stdout, cmd.Stderr = &out, &stderr
		err = cmd.Run()
		_ = l.Down(context.Background())
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != tc.code {
			t.Errorf("offset %s: exit %d, want %d\n%s\n%s", tc.offset, code, tc.code, out.String(), stderr.String())
			continue
		}
		// JSON lines: one check a line, the result (with the summary) last.
		var rep preflight.Report
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		for _, ln := range lines[:len(lines)-1] {
			var c preflight.CheckResult
			if err := json.Unmarshal([]byte(ln), &c); err != nil {
				t.Errorf("--output json line %q: %v", ln, err)
			}
			rep.Checks = append(rep.Checks, c)
		}
		var res struct {
			Kind string            `json:"kind"`
			Data preflight.Summary `json:"data"`
		}
		if err := json.Unmarshal([]byte(lines[len(lines)-1]), &res); err != nil || res.Kind != "result" {
			t.Errorf("--output json: the last line is not the result (%v)\n%s", err, out.String())
			continue
		}
		rep.Summary = res.Data
		if tc.code == 2 && (rep.Summary.Fail != 1 || rep.Failed()[0] != "ntp "+l.Site.Cluster.NTPSources[0]) {
			t.Errorf("offset %s: failed %v, want only the NTP source", tc.offset, rep.Failed())
		}
	}
}
