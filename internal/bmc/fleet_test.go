package bmc_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/bmc"
	"github.com/bootstrap-dev/bootstrap/internal/bmc/bmctest"
)

// fileJournal is an append-only JSON-lines journal with fsync per entry, like the pipeline's;
// a torn last line (kill -9 mid-write) is ignored.
type fileJournal struct {
	mu sync.Mutex
	f  *os.File
	m  map[string]json.RawMessage
}

func openFileJournal(path string) (*fileJournal, error) {
	j := &fileJournal{m: map[string]json.RawMessage{}}
	if data, err := os.ReadFile(path); err == nil {
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var e struct {
				Key  string          `json:"key"`
				Data json.RawMessage `json:"data"`
			}
			if json.Unmarshal(sc.Bytes(), &e) == nil {
				j.m[e.Key] = e.Data
			}
		}
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, err
	}
	j.f = f
	return j, nil
}

func (j *fileJournal) Done(key string, out any) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	d, ok := j.m[key]
	if ok && out != nil {
		_ = json.Unmarshal(d, out)
	}
	return ok
}

func (j *fileJournal) Record(key string, data any) error {
	d, err := json.Marshal(data)
	if err != nil {
		return err
	}
	line, _ := json.Marshal(map[string]any{"key": key, "data": json.RawMessage(d)})
	j.mu.Lock()
	defer j.mu.Unlock()
	if _, err := j.f.Write(append(line, '\n')); err != nil {
		return err
	}
	if err := j.f.Sync(); err != nil {
		return err
	}
	j.m[key] = d
	return nil
}

// fleetConfig is what the parent test hands the bootstrap child.
type fleetConfig struct {
	Nodes   []fleetNode `json:"nodes"`
	CAFile  string      `json:"caFile"`
	ISOURL  string      `json:"isoURL"`
	Journal string      `json:"journal"`
}

type fleetNode struct{ Name, Address string }

const childEnv = "BMC_TEST_BOOT_CHILD"

func TestMain(m *testing.M) {
	if cfg := os.Getenv(childEnv); cfg != "" {
		os.Exit(bootChild(cfg))
	}
	os.Exit(m.Run())
}

// bootChild is the "bootstrap" process of the kill test: BootAll over a file journal.
func bootChild(cfgPath string) int {
	data, err := os.ReadFile(cfgPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	var cfg fleetConfig
	if err := json.Unmarshal(data, &cfg); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	j, err := openFileJournal(cfg.Journal)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	targets := make([]bmc.Target, len(cfg.Nodes))
	for i, n := range cfg.Nodes {
		targets[i] = bmc.Target{Node: n.Name, Address: n.Address, Username: "root", CAFile: cfg.CAFile,
			Password: func() (string, error) { return os.Getenv("BMC_TEST_PASSWORD"), nil }}
	}
	res, err := bmc.BootAll(context.Background(), targets, func(string) string { return cfg.ISOURL }, j, fast()...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "failed:", res.Failed, err)
		return 1
	}
	return 0
}

func startFleet(t testing.TB, n int, o bmctest.Options) ([]*bmctest.BMC, []bmc.Target) {
	sims := make([]*bmctest.BMC, n)
	targets := make([]bmc.Target, n)
	for i := range sims {
		oi := o
		oi.MACs = []string{fmt.Sprintf("b0:7b:25:00:%02x:%02x", i/256, i%256)}
		// A mixed rack: every fourth node a generic Redfish BMC (persistent override, basic
		// auth; powered off, as odd nodes are), every fourth a PATCH-only one, the rest iDRAC9s.
		switch {
		case i%4 == 1:
			oi.Profile = bmctest.ProfileGeneric
		case i%4 == 3:
			oi.Profile = bmctest.ProfilePatchOnly
		case i%3 == 1:
			oi.Firmware = "5.10.50.00" // media under the Manager
		case i%7 == 6:
			oi.Firmware = "4.10.10.10" // ImportSystemConfiguration boot-once
		}
		if i%2 == 0 {
			oi.Power = "On"
		}
		sims[i], targets[i] = simNode(t, fmt.Sprintf("node-%02d", i), oi)
	}
	return sims, targets
}

func TestBootAllFiftyNodes(t *testing.T) {
	iso := bmctest.NewISOServer()
	defer iso.Close()
	url := iso.URL() + "/agent.x86_64.iso"
	sims, targets := startFleet(t, 50, bmctest.Options{Latency: time.Millisecond})
	sims[17].Inject(bmctest.Fault{Op: "insert", Status: 400, MessageID: "IDRAC.2.8.RAC0904"}) // one node cannot fetch the ISO
	var mu sync.Mutex
	finished := 0
	progress := bmc.WithProgress(func(p bmc.Progress) {
		if p.Step == bmc.StepConfirm && p.Done {
			mu.Lock()
			finished++
			mu.Unlock()
		}
	})
	res, err := bmc.BootAll(context.Background(), targets, func(string) string { return url }, newMemJournal(), append(fast(), progress)...)
	if err == nil || len(res.Failed) != 1 || res.Failed[0] != "node-17" {
		t.Fatalf("failed %v err %v; want only node-17", res.Failed, err)
	}
	if !strings.Contains(err.Error(), "node node-17: media") {
		t.Errorf("error does not name the node and step: %v", err)
	}
	for i, s := range sims {
		st := s.Stats()
		if i == 17 {
			if st.PowerActions != 0 {
				t.Errorf("node-17 was powered although its media failed")
			}
			continue
		}
		if st.PowerActions != 1 || st.BootedFrom != url {
			t.Errorf("node-%02d: %d power actions, booted from %q", i, st.PowerActions, st.BootedFrom)
		}
	}
	if finished != 49 {
		t.Errorf("progress reported %d nodes booted, want 49", finished)
	}
}

// TestBootAllKillResume boots 50 nodes in a child process, kills it with SIGKILL in the middle,
// and resumes: no node is power-cycled twice, every node ends booted from the ISO. The
// simulators live in this (parent) process so their counters span both children.
func TestBootAllKillResume(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns child processes")
	}
	iso := bmctest.NewISOServer()
	defer iso.Close()
	url := iso.URL() + "/agent.x86_64.iso"
	sims, targets := startFleet(t, 50, bmctest.Options{Latency: 2 * time.Millisecond, BootDelay: 30 * time.Millisecond})
	dir := t.TempDir()
	cfg := fleetConfig{CAFile: targets[0].CAFile, ISOURL: url, Journal: filepath.Join(dir, "journal.jsonl")}
	for _, tg := range targets {
		cfg.Nodes = append(cfg.Nodes, fleetNode{Name: tg.Node, Address: tg.Address})
	}
	cfgPath := filepath.Join(dir, "fleet.json")
	data, _ := json.Marshal(cfg)
	if err := os.WriteFile(cfgPath, data, 0o600); err != nil {
		t.Fatal(err)
	}
	child := func() *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"="+cfgPath, "BMC_TEST_PASSWORD=calvin")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("child stderr: %s", stderr.String())
			}
		})
		return cmd
	}
	powerRecords := func() map[string]bool {
		j, err := openFileJournal(cfg.Journal)
		if err != nil {
			t.Fatal(err)
		}
		defer j.f.Close()
		got := map[string]bool{}
		for k := range j.m {
			if rest, ok := strings.CutSuffix(k, "/"+bmc.StepPower); ok {
				got[strings.TrimPrefix(rest, "node:")] = true
			}
		}
		return got
	}

	first := child()
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for len(powerRecords()) < 12 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = first.Wait()
	poweredBefore := powerRecords()
	if len(poweredBefore) == 0 || len(poweredBefore) == 50 {
		t.Fatalf("kill landed outside the middle: %d nodes powered", len(poweredBefore))
	}
	actionsAtKill := 0
	for _, s := range sims {
		actionsAtKill += s.Stats().PowerActions
	}
	t.Logf("killed after %d power records, %d power actions on the BMCs", len(poweredBefore), actionsAtKill)

	second := child()
	if err := second.Run(); err != nil {
		t.Fatalf("resumed run: %v", err)
	}
	for _, s := range sims { // a (wrong) extra power action's boot completes and is counted
		if err := s.Idle(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	for i, s := range sims {
		st := s.Stats()
		name := targets[i].Node
		if poweredBefore[name] && st.PowerActions != 1 {
			t.Errorf("%s: power step was journaled before the kill, yet %d power actions", name, st.PowerActions)
		}
		if st.PowerActions != 1 {
			t.Errorf("%s: %d power actions, want exactly 1", name, st.PowerActions)
		}
		if st.BootedFrom != url || st.Inserted != url {
			t.Errorf("%s: booted from %q with %q inserted, want the ISO", name, st.BootedFrom, st.Inserted)
		}
		if st.ActiveSessions > 1 {
			t.Errorf("%s: %d sessions left open", name, st.ActiveSessions)
		}
	}
}
