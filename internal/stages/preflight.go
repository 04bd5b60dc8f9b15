package stages

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/finding"
	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
	"github.com/bootstrap-dev/bootstrap/internal/preflight"
)

// PreflightResultsFile is where the preflight stage writes its last report, in the work dir.
const PreflightResultsFile = "preflight.json"

// Preflight is the read-only first stage: it runs every check the site profile calls for and
// fails when any check fails (the error is a *preflight.FailedError; the CLI exits 2). It changes
// nothing, so it runs on every pass (AlwaysRun); Verify runs the checks for callers that only
// ask whether the world still holds.
type Preflight struct {
	// Options are the base check options; WorkDir, ClusterInstalled and (through DiskNeed)
	// MinFreeBytes are filled in from the environment.
	Options preflight.Options
	// Runner runs the checks (timeout, parallelism); its Progress is set by the stage.
	Runner preflight.Runner
	// DiskNeed, when set, says how many bytes the run will still write to the work dir (the
	// mirror plan's remaining total plus the ISOs); it overrides Options.MinFreeBytes.
	DiskNeed func(ctx context.Context, env *pipeline.Env) (int64, error)
	// More adds checks that need another adapter's view of the environment (the registry's
	// TLS and credentials as the mirror stage builds them, the ISO URL the iso stage
	// published). Each returns its checks for env; the runner orders them by category.
	More []func(env *pipeline.Env) []preflight.Check
	// Scope is the stages this run will run (nil: every stage). A failed check none of whose
	// stages is among them is shown as not blocking and does not fail the stage
	// (preflight.Report.Scoped): a BMC that does not answer does not stop `run --until mirror`.
	Scope []string
}

// PreflightOutput is the journaled output of the preflight stage. It holds only what the profile
// decides, so that it is the same on every pass (a runner without AlwaysRunner marks later
// stages stale when an output changes, and offsets, free bytes and durations change on every
// run). The full report is journaled as the stage's "results" step and written to ResultsFile
// (which `bootstrap report` reads).
type PreflightOutput struct {
	// Checks names every check that ran, in report order.
	Checks []string `json:"checks"`
	// ResultsFile is the last full report, relative to the work dir.
	ResultsFile string `json:"resultsFile"`
}

// PreflightResultsStep is the step key under which the full report is journaled.
const PreflightResultsStep = "results"

// preflightInputs is what the stage's checks depend on; it holds no secret values. The stage
// runs every time anyway; the fingerprint only tells the journal what was checked.
type preflightInputs struct {
	Name        string   `json:"name"`
	BaseDomain  string   `json:"baseDomain"`
	APIVIPs     []string `json:"apiVIPs,omitempty"`
	IngressVIPs []string `json:"ingressVIPs,omitempty"`
	NTPSources  []string `json:"ntpSources,omitempty"`
	DNSServers  []string `json:"dnsServers,omitempty"`
	Nodes       []string `json:"nodes,omitempty"`
}

// Name implements pipeline.Stage.
func (Preflight) Name() string { return NamePreflight }

// Summary implements pipeline.Stage.
func (Preflight) Summary() string { return summary(NamePreflight) }

// AlwaysRun implements pipeline.AlwaysRunner: the world is checked on every pass. Its output is
// not an input of later stages.
func (Preflight) AlwaysRun() bool { return true }

// Inputs implements pipeline.Stage.
func (Preflight) Inputs(env *pipeline.Env) (any, error) {
	c := env.Site.Cluster
	in := preflightInputs{Name: c.Name, BaseDomain: c.BaseDomain, APIVIPs: c.APIVIPs, IngressVIPs: c.IngressVIPs,
		NTPSources: c.NTPSources, DNSServers: c.DNSServers}
	for _, n := range env.Site.Nodes {
		in.Nodes = append(in.Nodes, n.Name)
	}
	return in, nil
}

// Run implements pipeline.Stage.
func (p Preflight) Run(ctx context.Context, env *pipeline.Env) (any, error) {
	rep, err := p.check(ctx, env)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil { // interrupted: not a verdict on the site
		return nil, fmt.Errorf("preflight: %w", err)
	}
	if env.Steps != nil {
		if err := env.Steps.Record(PreflightResultsStep, rep); err != nil {
			return nil, fmt.Errorf("preflight: journal results: %w", err)
		}
	}
	if err := writeReport(env.WorkDir, rep, env.ScrubBytes); err != nil {
		return nil, err
	}
	out := PreflightOutput{ResultsFile: PreflightResultsFile}
	for _, c := range rep.Checks {
		out.Checks = append(out.Checks, c.Name)
	}
	return out, rep.Err()
}

// Verify implements pipeline.Verifier: the world still passes preflight.
func (p Preflight) Verify(ctx context.Context, env *pipeline.Env) error {
	rep, err := p.check(ctx, env)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("preflight: %w", err)
	}
	return rep.Err()
}

// Checks returns every check for env: the profile's jump-host checks (preflight.Checks with
// Options completed from env: the work dir, whether install already succeeded, the disk need),
// then those of More. `bootstrap preflight` runs the same list without running the pipeline.
func (p Preflight) Checks(ctx context.Context, env *pipeline.Env) ([]preflight.Check, error) {
	o := p.Options
	o.WorkDir = env.WorkDir
	// Inside `bootstrap run` preflight sees no later stage's output: the journal tells.
	o.ClusterInstalled = stageSucceeded(env, NameInstall)
	// Once the iso stage has published its URLs, the BMCs are checked against those (the length
	// limit, and media already inserted by an earlier boot is not stale).
	if raw := stageOutput(env, NameISO); len(raw) > 0 {
		if iso, err := ISOOutputKey.Decode(raw); err == nil {
			urlFor := iso.urlFor(env.Site)
			o.ISOURLs = map[string]string{}
			for _, n := range env.Site.Nodes {
				o.ISOURLs[n.Name] = urlFor(n.Name)
			}
		}
	}
	if p.DiskNeed != nil {
		need, err := p.DiskNeed(ctx, env)
		if err != nil {
			return nil, fmt.Errorf("preflight: disk need: %w", err)
		}
		o.MinFreeBytes = max(need, 1) // 0 would mean "use the default"
	}
	checks := preflight.Checks(env.Site, o)
	for _, more := range p.More {
		checks = append(checks, more(env)...)
	}
	return checks, nil
}

func (p Preflight) check(ctx context.Context, env *pipeline.Env) (preflight.Report, error) {
	checks, err := p.Checks(ctx, env)
	if err != nil {
		return preflight.Report{}, err
	}
	total := int64(len(checks))
	var done atomic.Int64
	r := p.Runner
	r.Progress = func(c preflight.CheckResult) {
		if env.Events != nil {
			env.Events(pipeline.Event{Time: time.Now(), Kind: pipeline.Progress, Stage: NamePreflight,
				Current: done.Add(1), Total: total, Unit: "checks"})
		}
	}
	rep := r.Run(ctx, checks).Scoped(p.Scope)
	tableEvents(env.Events, rep)
	return rep, nil
}

// tableEvents shows the results as `bootstrap preflight` prints them: one row per check in the
// report's order (grouped by category, not in completion order), aligned, each with its verdict
// (kind info for PASS, warning for WARN, failure for FAIL), then the summary line.
func tableEvents(sink pipeline.Sink, rep preflight.Report) {
	if sink == nil {
		return
	}
	wc, wn := 0, 0
	for _, c := range rep.Checks {
		wc, wn = max(wc, len(c.Category)), max(wn, len(c.Name))
	}
	now := time.Now()
	for _, c := range rep.Checks {
		kind := pipeline.Info
		switch c.Status {
		case finding.Warn:
			kind = pipeline.Warning
		case finding.Fail:
			kind = pipeline.Failure
			if !c.Blocking { // shown, and said not to block
				kind = pipeline.Warning
			}
		}
		msg := fmt.Sprintf("%-*s  %-*s  %s", wc, c.Category, wn, c.Name, strings.ReplaceAll(strings.TrimSpace(c.Message), "\n", "; "))
		if c.Remedy != "" && c.Status != finding.Pass {
			msg += " → " + c.Remedy
		}
		if c.Status == finding.Fail && !c.Blocking {
			msg += " (needed by " + strings.Join(c.NeededBy, ", ") + " only, which this run does not run)"
		}
		sink(pipeline.Event{Time: now, Kind: kind, Stage: NamePreflight, Step: c.Name, Status: c.Verdict(), Message: msg})
	}
	sink(pipeline.Event{Time: now, Kind: pipeline.Info, Stage: NamePreflight, Message: rep.Summary.String()})
}

// writeReport writes the report to the work dir atomically, for operators and `bootstrap report`,
// through the runner's secret scrubber (a check's detail may quote a peer that echoes credentials).
func writeReport(dir string, rep preflight.Report, scrub func([]byte) []byte) error {
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("preflight: %w", err)
	}
	var b bytes.Buffer
	if err := preflight.WriteJSON(&b, rep); err != nil {
		return fmt.Errorf("preflight: encode report: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".preflight-*.json")
	if err != nil {
		return fmt.Errorf("preflight: write report: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(scrub(b.Bytes())); err != nil {
		tmp.Close()
		return fmt.Errorf("preflight: write report: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("preflight: write report: %w", err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, PreflightResultsFile)); err != nil {
		return fmt.Errorf("preflight: write report: %w", err)
	}
	return nil
}
