package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/bootstrap-dev/bootstrap/e2e/lab/dnsd"
	"github.com/bootstrap-dev/bootstrap/e2e/lab/ntpd"
	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
	"github.com/bootstrap-dev/bootstrap/internal/preflight"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

func TestPreflightCmd(t *testing.T) {
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
	dir := t.TempDir()
	run := func(args ...string) (string, error) {
		var out bytes.Buffer
		cmd := newPreflightCmd(preflightDeps{
			LoadSite: func(*cobra.Command) (*site.Site, error) { return s, nil },
			WorkDir:  func(*cobra.Command, *site.Site) (string, error) { return dir, nil },
		})
		cmd.SilenceErrors = true
		cmd.SetOut(&out)
		cmd.SetErr(&out)
		cmd.SetArgs(append([]string{"--min-free-gib", "1"}, args...))
		err := cmd.Execute()
		return out.String(), err
	}

	out, err := run()
	if err != nil {
		t.Fatalf("preflight: %v\n%s", err, out)
	}
	if !strings.Contains(out, "PASS") || !strings.Contains(out, "0 failed") {
		t.Errorf("table:\n%s", out)
	}

	n.SetOffset(-10 * time.Minute)
	out, err = run("--json")
	var fe *preflight.FailedError
	if !errors.As(err, &fe) || fe.Checks[0] != "ntp "+n.Addr() {
		t.Fatalf("skewed clock: err %v, want a FailedError naming the NTP check", err)
	}
	kinds, res, data := jsonLinesOf(t, out)
	var sum preflight.Summary
	if err := json.Unmarshal(data, &sum); err != nil || res.ExitCode != exitPreflight || res.OK {
		t.Fatalf("--json result %+v: %v\n%s", res, err, out)
	}
	if sum.Fail != 1 || len(kinds) != sum.Pass+sum.Warn+sum.Fail+1 || kinds[0] != "check" {
		t.Errorf("summary %+v, lines %v", sum, kinds)
	}
}

// After a successful install the VIPs answer by design; the command reads the journal.
func TestPreflightCmdAfterInstall(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.13:0")
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
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	s := &site.Site{Cluster: site.Cluster{APIVIPs: []string{"127.0.0.13"}}}
	dir := t.TempDir()
	run := func() error {
		cmd := newPreflightCmd(preflightDeps{
			LoadSite: func(*cobra.Command) (*site.Site, error) { return s, nil },
			WorkDir:  func(*cobra.Command, *site.Site) (string, error) { return dir, nil },
		})
		cmd.SilenceErrors = true
		cmd.SetOut(io.Discard)
		cmd.SetArgs([]string{"--min-free-gib", "1", "--vip-ports", port})
		return cmd.Execute()
	}
	var fe *preflight.FailedError
	if err := run(); !errors.As(err, &fe) || fe.Checks[0] != "vip 127.0.0.13 (api) free" {
		t.Fatalf("before install: %v, want the VIP in use", err)
	}
	j, _, err := pipeline.OpenJournal(pipeline.JournalPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []pipeline.Entry{
		{Kind: pipeline.EntryStageStarted, Run: 1, Stage: "install", Attempt: 1},
		{Kind: pipeline.EntryStageSucceeded, Run: 1, Stage: "install", Attempt: 1, Data: json.RawMessage(`{"installed":true}`)},
	} {
		if _, err := j.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	j.Close()
	if err := run(); err != nil {
		t.Fatalf("after install: %v", err)
	}
}
