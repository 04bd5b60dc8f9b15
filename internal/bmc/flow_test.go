package bmc_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/bmc"
	"github.com/bootstrap-dev/bootstrap/internal/bmc/bmctest"
)

func TestBootNodeFirmwareLayouts(t *testing.T) {
	iso := bmctest.NewISOServer()
	defer iso.Close()
	url := iso.URL() + "/agent.x86_64.iso"
	cases := []struct {
		firmware, power, stale string
		layout                 bmc.Layout
		method, action         string
	}{
		{"3.30.30.30", "Off", "", bmc.LayoutManager, bmc.MethodSCP, "On"},
		{"5.10.50.00", "On", iso.URL() + "/old.iso", bmc.LayoutManager, bmc.MethodStandard, "ForceRestart"},
		{"6.10.30.00", "Off", iso.URL() + "/old.iso", bmc.LayoutSystem, bmc.MethodStandard, "On"},
		{"7.00.00.00", "On", "", bmc.LayoutSystem, bmc.MethodStandard, "ForceRestart"},
	}
	for _, tc := range cases {
		t.Run(tc.firmware, func(t *testing.T) {
			sim, target := simNode(t, "node-"+tc.firmware, bmctest.Options{Firmware: tc.firmware, Power: tc.power, StaleMedia: tc.stale})
			res, err := bmc.BootNode(context.Background(), target, url, newMemJournal(), fast()...)
			if err != nil {
				t.Fatalf("BootNode: %v", err)
			}
			if res.Layout != tc.layout || res.Method != tc.method || res.PowerAction != tc.action {
				t.Errorf("result layout=%s method=%s action=%s, want %s %s %s", res.Layout, res.Method, res.PowerAction, tc.layout, tc.method, tc.action)
			}
			st := sim.Stats()
			if st.PowerActions != 1 || st.BootedFrom != url || st.Inserted != url {
				t.Errorf("simulator: power actions %d, booted from %q, inserted %q; want 1, %q, %q", st.PowerActions, st.BootedFrom, st.Inserted, url, url)
			}
			if st.ActiveSessions != 0 {
				t.Errorf("%d Redfish sessions left open", st.ActiveSessions)
			}
			if st.RangeRequests < 5 {
				t.Errorf("iDRAC made %d range requests to the ISO server; want the insert check and the boot reads", st.RangeRequests)
			}
		})
	}
}

func TestBootNodeIdempotent(t *testing.T) {
	iso := bmctest.NewISOServer()
	defer iso.Close()
	url := iso.URL() + "/agent.x86_64.iso"
	sim, target := simNode(t, "n1", bmctest.Options{})
	j := newMemJournal()
	if _, err := bmc.BootNode(context.Background(), target, url, j, fast()...); err != nil {
		t.Fatal(err)
	}
	before := sim.Stats()
	res, err := bmc.BootNode(context.Background(), target, url, j, fast()...)
	if err != nil {
		t.Fatal(err)
	}
	after := sim.Stats()
	if !res.Resumed || after.Writes != before.Writes || after.PowerActions != 1 {
		t.Errorf("second run: resumed=%t writes %d→%d power actions %d; want no change", res.Resumed, before.Writes, after.Writes, after.PowerActions)
	}
}

// TestBootNodeResumeAfterPowerJournaled: the power step is in the journal (the crash came
// after it); the resumed run must not power the node again, only confirm.
func TestBootNodeResumeAfterPowerJournaled(t *testing.T) {
	iso := bmctest.NewISOServer()
	defer iso.Close()
	url := iso.URL() + "/agent.x86_64.iso"
	sim, target := simNode(t, "n1", bmctest.Options{})
	j := newMemJournal()
	if _, err := bmc.BootNode(context.Background(), target, url, j, fast()...); err != nil {
		t.Fatal(err)
	}
	// Forget the final step only: as if killed between the power record and the confirmation.
	j.mu.Lock()
	delete(j.m, bmc.StepKey("n1", bmc.StepConfirm))
	j.mu.Unlock()
	res, err := bmc.BootNode(context.Background(), target, url, j, fast()...)
	if err != nil {
		t.Fatal(err)
	}
	if st := sim.Stats(); st.PowerActions != 1 || res.PowerAction != "" || !res.Resumed {
		t.Errorf("power actions %d, action %q, resumed %t; want 1, none, true", st.PowerActions, res.PowerAction, res.Resumed)
	}
}

func TestBootNodeFaults(t *testing.T) {
	iso := bmctest.NewISOServer()
	defer iso.Close()
	url := iso.URL() + "/agent.x86_64.iso"
	cases := []struct {
		name     string
		firmware string
		faults   []bmctest.Fault
		setup    func(*bmctest.BMC)
		check    func(*testing.T, bmc.NodeResult)
	}{
		{name: "media already in use VRM0021", faults: []bmctest.Fault{{Op: "insert", Status: 500, MessageID: "IDRAC.2.8.VRM0021", Times: 1}}},
		{name: "internal error SYS446 on insert", faults: []bmctest.Fault{{Op: "insert", Status: 500, MessageID: "IDRAC.2.8.SYS446", Times: 2}}},
		{name: "SYS446 on SCP import", firmware: "4.10.10.10", faults: []bmctest.Fault{{Op: "scp", Status: 500, MessageID: "IDRAC.1.6.SYS446", Times: 2}}},
		{name: "HTTP 500s everywhere", faults: []bmctest.Fault{{Op: "any", Status: 500, Times: 3}}},
		{name: "503 on power action", faults: []bmctest.Fault{{Op: "reset", Status: 503, Times: 1}}},
		{name: "500 on boot override", faults: []bmctest.Fault{{Op: "boot-override", Status: 500, Times: 1}}},
		{name: "slow responses", faults: []bmctest.Fault{{Op: "get", Delay: 40 * time.Millisecond, Times: 10}}},
		{name: "session exhaustion RAC0218", setup: func(b *bmctest.BMC) { b.FillSessions(8) },
			check: func(t *testing.T, r bmc.NodeResult) {
				if !r.BasicAuth {
					t.Error("expected basic auth fallback")
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sim, target := simNode(t, "n1", bmctest.Options{Firmware: tc.firmware})
			for _, f := range tc.faults {
				sim.Inject(f)
			}
			if tc.setup != nil {
				tc.setup(sim)
			}
			res, err := bmc.BootNode(context.Background(), target, url, newMemJournal(), fast()...)
			if err != nil {
				t.Fatalf("BootNode: %v", err)
			}
			if st := sim.Stats(); st.PowerActions != 1 || st.BootedFrom != url {
				t.Errorf("power actions %d, booted from %q", st.PowerActions, st.BootedFrom)
			}
			if tc.check != nil {
				tc.check(t, res)
			}
		})
	}
}

func TestBootNodePermanentFailures(t *testing.T) {
	iso := bmctest.NewISOServer()
	defer iso.Close()
	good := iso.URL() + "/agent.x86_64.iso"
	cases := []struct {
		name, url, wantOp, wantRemedy string
		target                        func(bmc.Target) bmc.Target
		faults                        []bmctest.Fault
		wantErr                       error
	}{
		{name: "ISO not reachable from the BMC", url: "http://127.0.0.1:1/agent.x86_64.iso", wantOp: bmc.StepMedia, wantRemedy: "iso.baseURL"},
		{name: "wrong password", url: good, wantOp: bmc.StepConnect, wantRemedy: "password", wantErr: bmc.ErrAuth,
			target: func(t bmc.Target) bmc.Target {
				t.Password = func() (string, error) { return "wrong", nil }
				return t
			}},
		{name: "untrusted certificate", url: good, wantOp: bmc.StepConnect, wantRemedy: "caFile", wantErr: bmc.ErrTLS,
			target: func(t bmc.Target) bmc.Target { t.CAFile = ""; return t }},
		{name: "URL of 256 characters", url: good + "?" + strings.Repeat("x", bmc.MaxMediaURL-len(good)), wantOp: bmc.StepMedia},
		{name: "media in use persists", url: good, wantOp: bmc.StepMedia, wantRemedy: "virtual media",
			faults: []bmctest.Fault{{Op: "insert", Status: 500, MessageID: "IDRAC.2.8.VRM0021"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sim, target := simNode(t, "rack1-node7", bmctest.Options{})
			for _, f := range tc.faults {
				sim.Inject(f)
			}
			if tc.target != nil {
				target = tc.target(target)
			}
			_, err := bmc.BootNode(context.Background(), target, tc.url, newMemJournal(), fast()...)
			var be *bmc.Error
			if !errors.As(err, &be) {
				t.Fatalf("want *bmc.Error, got %v", err)
			}
			if be.Node != "rack1-node7" || be.Op != tc.wantOp || !strings.Contains(be.Remedy(), tc.wantRemedy) {
				t.Errorf("error node=%s op=%s remedy=%q; want op %s, remedy mentioning %q", be.Node, be.Op, be.Remedy(), tc.wantOp, tc.wantRemedy)
			}
			if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Errorf("want errors.Is %v: %v", tc.wantErr, err)
			}
			if strings.Contains(err.Error(), "calvin") {
				t.Error("error text contains the password")
			}
			if st := sim.Stats(); st.PowerActions != 0 {
				t.Errorf("node was powered (%d actions) although an earlier step failed", st.PowerActions)
			}
		})
	}
}

// crashJournal fails to record one key once, as if the process died right after the action.
type crashJournal struct {
	*memJournal
	failKey string
	failed  bool
}

func (j *crashJournal) Record(key string, data any) error {
	if key == j.failKey && !j.failed {
		j.failed = true
		return errors.New("killed")
	}
	return j.memJournal.Record(key, data)
}

// TestBootNodeResumeAfterPowerIntent: the power action reached the BMC but its record did not
// reach the journal. The resumed run reads back (one-time boot consumed) and does not act again.
func TestBootNodeResumeAfterPowerIntent(t *testing.T) {
	iso := bmctest.NewISOServer()
	defer iso.Close()
	url := iso.URL() + "/agent.x86_64.iso"
	for _, fw := range []string{"3.30.30.30", "6.10.30.00"} {
		t.Run(fw, func(t *testing.T) {
			sim, target := simNode(t, "n1", bmctest.Options{Firmware: fw, Power: "On"})
			j := &crashJournal{memJournal: newMemJournal(), failKey: bmc.StepKey("n1", bmc.StepPower)}
			if _, err := bmc.BootNode(context.Background(), target, url, j, fast()...); err == nil {
				t.Fatal("expected the simulated crash")
			}
			if !j.Done(bmc.StepKey("n1", bmc.StepPowerIntent), nil) || j.Done(bmc.StepKey("n1", bmc.StepPower), nil) {
				t.Fatal("journal should hold the intent only")
			}
			res, err := bmc.BootNode(context.Background(), target, url, j, fast()...)
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(50 * time.Millisecond)
			if st := sim.Stats(); st.PowerActions != 1 || st.BootedFrom != url || !res.Resumed {
				t.Errorf("power actions %d, booted from %q, resumed %t; want 1, the ISO, true", st.PowerActions, st.BootedFrom, res.Resumed)
			}
		})
	}
}

// TestBootNodeIntentNeverSent: the intent was journaled but the action never reached the BMC
// (crash before sending). After the resume grace the resumed run powers the node once.
func TestBootNodeIntentNeverSent(t *testing.T) {
	iso := bmctest.NewISOServer()
	defer iso.Close()
	url := iso.URL() + "/agent.x86_64.iso"
	sim, target := simNode(t, "n1", bmctest.Options{})
	j := &countingJournal{memJournal: newMemJournal(), n: map[string]int{}}
	_ = j.memJournal.Record(bmc.StepKey("n1", bmc.StepPowerIntent), map[string]string{"action": "On", "from": "Off", "method": bmc.MethodStandard})
	// The override was armed before the crash, so the read-back sees it still pending.
	if _, err := bmc.BootNode(context.Background(), target, url, j, fast()...); err != nil {
		t.Fatal(err)
	}
	if st := sim.Stats(); st.PowerActions != 1 || st.BootedFrom != url {
		t.Errorf("power actions %d, booted from %q", st.PowerActions, st.BootedFrom)
	}
	if n := j.n[bmc.StepKey("n1", bmc.StepPowerIntent)]; n != 0 {
		t.Errorf("the journaled intent was journaled again %d times: once per attempt", n)
	}
}

// TestBootEvidence: a server that ignores the one-time boot and starts from its disk looks
// booted to its BMC (override consumed, power on). Only the ISO server's fetch log tells; with
// the evidence hook the node fails naming the cause, without it the lie goes through.
func TestBootEvidence(t *testing.T) {
	iso := bmctest.NewISOServer()
	defer iso.Close()
	evidence := bmc.WithBootEvidence(func(_ context.Context, node, u string, since time.Time) error {
		path := u[strings.Index(u[len("http://"):], "/")+len("http://"):]
		if n := iso.ReadsSince(path, since); n == 0 {
			return fmt.Errorf("no read of %s by %s since %s", path, node, since.Format(time.RFC3339Nano))
		}
		return nil
	})
	short := append(fast(), bmc.WithPoll(5*time.Millisecond, 300*time.Millisecond), evidence)

	_, good := simNode(t, "good", bmctest.Options{})
	res, err := bmc.BootNode(context.Background(), good, iso.URL()+"/good.iso", newMemJournal(), short...)
	if err != nil || res.Evidence == "" {
		t.Fatalf("healthy node: %v, evidence %q", err, res.Evidence)
	}

	_, liar := simNode(t, "liar", bmctest.Options{IgnoreBootOnce: true})
	if _, err := bmc.BootNode(context.Background(), liar, iso.URL()+"/liar.iso", newMemJournal(), fast()...); err != nil {
		t.Fatalf("without evidence the BMC's word is taken: %v", err)
	}
	_, err = bmc.BootNode(context.Background(), liar, iso.URL()+"/liar2.iso", newMemJournal(), short...)
	var be *bmc.Error
	if !errors.As(err, &be) || !errors.Is(err, bmc.ErrNoISORead) || be.Node != "liar" || !strings.Contains(be.Remedy(), "--node liar") {
		t.Fatalf("want ErrNoISORead for node liar with a replay remedy, got %v", err)
	}
}
