package stages

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bootstrap-dev/bootstrap/e2e/lab/dnsd"
	"github.com/bootstrap-dev/bootstrap/e2e/lab/ntpd"
	"github.com/bootstrap-dev/bootstrap/internal/finding"
	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
	"github.com/bootstrap-dev/bootstrap/internal/preflight"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// The interfaces the runner looks for.
var (
	_ pipeline.Stage        = Preflight{}
	_ pipeline.Verifier     = Preflight{}
	_ pipeline.AlwaysRunner = Preflight{}
)

func TestPreflightStage(t *testing.T) {
	zone := dnsd.Zone{
		"api.lab.example.test":     {netip.MustParseAddr("127.0.0.10")},
		"api-int.lab.example.test": {netip.MustParseAddr("127.0.0.10")},
		"*.apps.lab.example.test":  {netip.MustParseAddr("127.0.0.11")},
	}
	d, err := dnsd.Start("127.0.0.1:0", zone)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close(context.Background())
	n, err := ntpd.Start("127.0.0.1:0", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()

	s := &site.Site{Cluster: site.Cluster{Name: "lab", BaseDomain: "example.test",
		APIVIPs: []string{"127.0.0.10"}, IngressVIPs: []string{"127.0.0.11"},
		DNSServers: []string{d.Addr()}, NTPSources: []string{n.Addr()}}}
	var mu sync.Mutex
	var events []pipeline.Event
	steps := newMemSteps()
	env := &pipeline.Env{Site: s, WorkDir: filepath.Join(t.TempDir(), ".bootstrap"), Steps: steps,
		Events: func(e pipeline.Event) { mu.Lock(); events = append(events, e); mu.Unlock() }}
	st := Preflight{Options: preflight.Options{MinFreeBytes: 1, VIPPorts: []int{1}}, Runner: preflight.Runner{Timeout: 5 * time.Second}}

	out, err := st.Run(context.Background(), env)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(env.WorkDir, PreflightResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	var rep preflight.Report
	if err := json.Unmarshal(b, &rep); err != nil || rep.Summary.Fail != 0 || rep.Summary.Pass < 6 {
		t.Errorf("results file: %v, summary %+v", err, rep.Summary)
	}
	if got := out.(PreflightOutput); len(got.Checks) != len(rep.Checks) || got.ResultsFile != PreflightResultsFile {
		t.Errorf("output %+v", got)
	}
	var recorded preflight.Report
	if !steps.Done(PreflightResultsStep, &recorded) || len(recorded.Checks) != len(rep.Checks) {
		t.Errorf("the full report is not journaled as a step: %+v", recorded)
	}

	// The output holds nothing measured: a second run (new offsets, durations, a new random
	// *.apps name) gives the same output, so later stages are not made stale by preflight.
	out2, err := st.Run(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	j1, _ := json.Marshal(out)
	j2, _ := json.Marshal(out2)
	if string(j1) != string(j2) {
		t.Errorf("output changed between runs:\n%s\n%s", j1, j2)
	}
	if len(events) != 2*(2*len(rep.Checks)+1) {
		t.Errorf("%d events for %d checks in two runs, want a progress event and a table row each, and a summary", len(events), len(rep.Checks))
	}
	// The rows come in the report's order (as `bootstrap preflight` prints its table), after
	// every progress event, each with its verdict; a FAIL is kind failure, never a warning.
	var rows []pipeline.Event
	for _, e := range events[:len(events)/2] {
		if e.Kind != pipeline.Progress {
			rows = append(rows, e)
		}
	}
	for i, c := range rep.Checks {
		e := rows[i]
		want := map[finding.Status]pipeline.EventKind{finding.Pass: pipeline.Info, finding.Warn: pipeline.Warning, finding.Fail: pipeline.Failure}[c.Status]
		if e.Step != c.Name || e.Status != c.Status.Label() || e.Kind != want {
			t.Errorf("row %d: %+v, want %s %s as %s", i, e, c.Status, c.Name, want)
		}
	}
	if err := st.Verify(context.Background(), env); err != nil {
		t.Errorf("Verify: %v", err)
	}

	// A broken DNS record fails the stage with the typed error the CLI maps to exit 2.
	delete(zone, "api.lab.example.test")
	d.Set(zone)
	_, err = st.Run(context.Background(), env)
	var fe *preflight.FailedError
	if !errors.As(err, &fe) || !strings.Contains(strings.Join(fe.Checks, ","), "dns api.lab.example.test") {
		t.Fatalf("Run with a broken record: %v", err)
	}
	if !steps.Done(PreflightResultsStep, &recorded) || recorded.Summary.Fail != 1 {
		t.Errorf("a failed run's results must be journaled too: %+v", recorded.Summary)
	}
	if err := st.Verify(context.Background(), env); !errors.As(err, &fe) {
		t.Errorf("Verify with a broken record: %v", err)
	}
}

// A VIP that answers fails preflight before install, and is expected once install succeeded.
func TestPreflightStageVIPAfterInstall(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.12:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := l.Addr().(*net.TCPAddr).Port
	s := &site.Site{Cluster: site.Cluster{APIVIPs: []string{"127.0.0.12"}}}
	env := &pipeline.Env{Site: s, WorkDir: t.TempDir()}
	st := Preflight{Options: preflight.Options{MinFreeBytes: 1, VIPPorts: []int{port}}}
	var fe *preflight.FailedError
	if _, err := st.Run(context.Background(), env); !errors.As(err, &fe) {
		t.Fatalf("before install: %v, want the VIP in use", err)
	}
	// inside `bootstrap run` preflight sees no later stage's output: the journal says install succeeded
	j, _, err := pipeline.OpenJournal(pipeline.JournalPath(env.WorkDir))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []pipeline.Entry{
		{Kind: pipeline.EntryStageStarted, Run: 1, Stage: "install", Attempt: 1},
		{Kind: pipeline.EntryStageSucceeded, Run: 1, Stage: "install", Attempt: 1, Data: json.RawMessage(`{"version":"4.18.0"}`)},
	} {
		if _, err := j.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	j.Close()
	if _, err := st.Run(context.Background(), env); err != nil {
		t.Fatalf("after install (journal): %v", err)
	}
	env.WorkDir = t.TempDir()
	env.Outputs = map[string]json.RawMessage{"install": json.RawMessage(`{}`)}
	if _, err := st.Run(context.Background(), env); err != nil {
		t.Fatalf("after install (outputs): %v", err)
	}
}

// The mirror plan's byte total, when known, is what the disk check asks for.
func TestPreflightStageDiskNeed(t *testing.T) {
	env := &pipeline.Env{Site: &site.Site{}, WorkDir: t.TempDir()}
	st := Preflight{DiskNeed: func(context.Context, *pipeline.Env) (int64, error) { return 1 << 60, nil }}
	out, err := st.Run(context.Background(), env)
	var fe *preflight.FailedError
	if !errors.As(err, &fe) || len(fe.Checks) != 1 || fe.Checks[0] != "disk work dir" {
		t.Fatalf("Run: %v, want the disk check failing", err)
	}
	b, err := os.ReadFile(filepath.Join(env.WorkDir, PreflightResultsFile))
	if err != nil || !strings.Contains(string(b), "1.0 EiB needed") || out == nil {
		t.Errorf("results %s (%v), output %+v", b, err, out)
	}
	st.DiskNeed = func(context.Context, *pipeline.Env) (int64, error) { return 0, errors.New("no plan") }
	if _, err := st.Run(context.Background(), env); err == nil || !strings.Contains(err.Error(), "no plan") {
		t.Errorf("Run with a broken DiskNeed: %v", err)
	}
}

// Checks that other adapters contribute (More) run with the rest and can fail the stage.
func TestPreflightStageMore(t *testing.T) {
	env := &pipeline.Env{Site: &site.Site{}, WorkDir: t.TempDir()}
	st := Preflight{Options: preflight.Options{MinFreeBytes: 1}, More: []func(*pipeline.Env) []preflight.Check{
		func(e *pipeline.Env) []preflight.Check {
			return []preflight.Check{preflight.Func("registry quay.lab", preflight.CategoryRegistry, func(context.Context) finding.Finding {
				return finding.Failf("Trust the registry's CA.", "x509: certificate signed by unknown authority")
			})}
		},
	}}
	checks, err := st.Checks(context.Background(), env)
	if err != nil || len(checks) == 0 || checks[len(checks)-1].Name() != "registry quay.lab" {
		t.Fatalf("Checks: %v, %d checks, want the contributed one last", err, len(checks))
	}
	_, err = st.Run(context.Background(), env)
	var fe *preflight.FailedError
	if !errors.As(err, &fe) || len(fe.Checks) != 1 || fe.Checks[0] != "registry quay.lab" {
		t.Fatalf("Run: %v, want the registry check failing", err)
	}
}
