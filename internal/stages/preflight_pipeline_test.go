package stages

import (
	"context"
	"errors"
	"net/netip"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bootstrap-dev/bootstrap/e2e/lab/dnsd"
	"github.com/bootstrap-dev/bootstrap/e2e/lab/ntpd"
	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
	"github.com/bootstrap-dev/bootstrap/internal/preflight"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// later is a stand-in for the mirror stage: it counts its runs.
type later struct{ runs int }

func (*later) Name() string                                      { return "later" }
func (*later) Summary() string                                   { return "a later stage" }
func (*later) Inputs(*pipeline.Env) (any, error)                 { return "same", nil }
func (l *later) Run(context.Context, *pipeline.Env) (any, error) { l.runs++; return "done", nil }

// Under the real runner: preflight checks the world on every run (AlwaysRun), a failed check
// stops the run with a *preflight.FailedError, and preflight running again, after a fix or just
// on the next pass, does not make the finished later stages run again.
func TestPreflightInThePipeline(t *testing.T) {
	a := func(s string) []netip.Addr { return []netip.Addr{netip.MustParseAddr(s)} }
	zone := dnsd.Zone{"api.lab.example.test": a("127.0.0.10"), "api-int.lab.example.test": a("127.0.0.10"),
		"*.apps.lab.example.test": a("127.0.0.11")}
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
	next := &later{}
	var mu sync.Mutex
	var events []pipeline.Event
	r := &pipeline.Runner{
		Stages:  []pipeline.Stage{Preflight{Options: preflight.Options{MinFreeBytes: 1, VIPPorts: []int{1}}, Runner: preflight.Runner{Timeout: 5 * time.Second}}, next},
		Site:    s,
		WorkDir: filepath.Join(t.TempDir(), ".bootstrap"),
		Sink:    func(e pipeline.Event) { mu.Lock(); events = append(events, e); mu.Unlock() },
	}
	run := func() ([]string, error) {
		mu.Lock()
		events = nil
		mu.Unlock()
		err := r.Run(context.Background(), pipeline.RunOptions{})
		mu.Lock()
		defer mu.Unlock()
		var seen []string
		for _, e := range events {
			switch e.Kind {
			case pipeline.StageStarted, pipeline.StageSucceeded, pipeline.StageFailed, pipeline.StageSkipped, pipeline.StageStale:
				seen = append(seen, e.Stage+":"+string(e.Kind))
			}
		}
		return seen, err
	}
	want := func(got []string, want ...string) {
		t.Helper()
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("stages:\n got %v\nwant %v", got, want)
		}
	}

	got, err := run()
	if err != nil {
		t.Fatal(err)
	}
	want(got, "preflight:stage-started", "preflight:stage-succeeded", "later:stage-started", "later:stage-succeeded")

	got, err = run() // nothing changed: preflight checks again, the later stage is skipped
	if err != nil {
		t.Fatal(err)
	}
	want(got, "preflight:stage-started", "preflight:stage-succeeded", "later:stage-skipped")

	delete(zone, "api.lab.example.test")
	d.Set(zone)
	got, err = run()
	var fe *preflight.FailedError
	if !errors.As(err, &fe) || fe.Checks[0] != "dns api.lab.example.test" {
		t.Fatalf("broken DNS: %v, want a *preflight.FailedError through the StageError", err)
	}
	want(got, "preflight:stage-started", "preflight:stage-failed")

	zone["api.lab.example.test"] = a("127.0.0.10")
	d.Set(zone)
	got, err = run()
	if err != nil {
		t.Fatal(err)
	}
	want(got, "preflight:stage-started", "preflight:stage-succeeded", "later:stage-skipped")
	if next.runs != 1 {
		t.Errorf("the later stage ran %d times, want once", next.runs)
	}
}
