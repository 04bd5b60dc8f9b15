package stages

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/bmc"
	"github.com/bootstrap-dev/bootstrap/internal/bmc/bmctest"
	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// bootSteps is an in-memory pipeline.Steps for the boot stage tests.
type bootSteps struct {
	mu sync.Mutex
	m  map[string][]byte
}

func (s *bootSteps) Done(key string, out any) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.m[key]
	if ok && out != nil {
		_ = json.Unmarshal(b, out)
	}
	return ok
}

func (s *bootSteps) Record(key string, data any) error {
	b, err := json.Marshal(data)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[key] = b
	return nil
}

// Previous reports nothing: bootSteps holds a single attempt (boot_carry_test.go uses the runner).
func (s *bootSteps) Previous(string, any) bool { return false }

const bootTestPassword = "s3cret-iDRAC-pw"

type bootLab struct {
	sims map[string]*bmctest.BMC
	iso  *bmctest.ISOServer
	site *site.Site
}

// newBootLab starts one simulated BMC per name: an iDRAC9, unless the name contains "generic"
// (bmctest.ProfileGeneric) or "patch" (bmctest.ProfilePatchOnly).
func newBootLab(t *testing.T, names ...string) *bootLab {
	t.Helper()
	cert, err := bmctest.NewCert()
	if err != nil {
		t.Fatal(err)
	}
	ca := filepath.Join(t.TempDir(), "idrac-ca.pem")
	if err := os.WriteFile(ca, cert.CAPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("BOOT_TEST_BMC_PASSWORD", bootTestPassword)
	lab := &bootLab{sims: map[string]*bmctest.BMC{}, iso: bmctest.NewISOServer()}
	t.Cleanup(lab.iso.Close)
	// The simulated ISO server stands in for this process's own: iso.serveAddress is its address.
	s := &site.Site{ISO: site.ISO{ServeAddress: strings.TrimPrefix(lab.iso.URL(), "http://"), BaseURL: lab.iso.URL() + "/"}}
	for i, n := range names {
		mac := fmt.Sprintf("b0:7b:25:00:00:%02x", i)
		o := bmctest.Options{Cert: cert, Password: bootTestPassword, MACs: []string{mac}}
		switch {
		case strings.Contains(n, "generic"):
			o.Profile = bmctest.ProfileGeneric
		case strings.Contains(n, "patch"):
			o.Profile = bmctest.ProfilePatchOnly
		}
		sim := bmctest.New(o)
		t.Cleanup(sim.Close)
		lab.sims[n] = sim
		s.Nodes = append(s.Nodes, site.Node{Name: n, Role: site.RoleMaster, BootMAC: mac, BMC: site.BMC{
			Address: sim.URL(), Username: "root", CAFile: ca, Password: site.SecretRef{Env: "BOOT_TEST_BMC_PASSWORD"}}})
	}
	lab.site = s
	return lab
}

func (l *bootLab) env(steps *bootSteps, events *[]pipeline.Event) *pipeline.Env {
	var mu sync.Mutex
	return &pipeline.Env{Site: l.site, Outputs: map[string]json.RawMessage{}, Steps: steps,
		Events: func(e pipeline.Event) {
			mu.Lock()
			defer mu.Unlock()
			if events != nil {
				*events = append(*events, e)
			}
		}}
}

func fastBoot() Boot {
	return Boot{Options: []bmc.Option{bmc.WithRetry(3, 5*time.Millisecond), bmc.WithPoll(5*time.Millisecond, 5*time.Second),
		bmc.WithResumeGrace(300 * time.Millisecond)}}
}

func TestBootStageRunResumeReplay(t *testing.T) {
	lab := newBootLab(t, "m0", "m1", "m2")
	want := lab.iso.URL() + "/" + DefaultISOName
	steps := &bootSteps{m: map[string][]byte{}}
	var events []pipeline.Event
	env := lab.env(steps, &events)
	stage := fastBoot()
	var _ pipeline.Stage = stage
	var _ pipeline.Verifier = stage
	var _ pipeline.Planner = stage

	out, err := stage.Run(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(out)
	in, _ := stage.Inputs(env)
	rawIn, _ := json.Marshal(in)
	for _, b := range [][]byte{raw, rawIn} {
		if strings.Contains(string(b), bootTestPassword) {
			t.Fatalf("the BMC password leaked into the journal: %s", b)
		}
	}
	for n, s := range lab.sims {
		if st := s.Stats(); st.PowerActions != 1 || st.BootedFrom != want {
			t.Errorf("%s: %d power actions, booted from %q; want 1, %q", n, st.PowerActions, st.BootedFrom, want)
		}
	}
	progress := 0
	for _, e := range events {
		if e.Kind == pipeline.Progress && e.Unit == "nodes" {
			progress++
		}
		if strings.Contains(e.Message, bootTestPassword) {
			t.Error("password in an event")
		}
	}
	if progress != 3 {
		t.Errorf("%d node progress events, want 3", progress)
	}
	if err := stage.Verify(context.Background(), env); err != nil {
		t.Errorf("Verify after a boot: %v", err)
	}

	// Resume with the same journal: nothing is powered again.
	if _, err := stage.Run(context.Background(), env); err != nil {
		t.Fatal(err)
	}
	// Replay one node: a new attempt (empty steps) limited to m1 powers m1 only.
	replay := lab.env(&bootSteps{m: map[string][]byte{}}, nil)
	replay.Nodes, replay.Replay = []string{"m1"}, true
	res, err := stage.Run(context.Background(), replay)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.(BootOutput).Nodes; len(got) != 1 || got[0].Node != "m1" {
		t.Errorf("replay touched %+v, want m1 only", got)
	}
	for n, s := range lab.sims {
		want := 1
		if n == "m1" {
			want = 2
		}
		if st := s.Stats(); st.PowerActions != want {
			t.Errorf("%s: %d power actions after resume and replay of m1, want %d", n, st.PowerActions, want)
		}
	}
}

func TestBootStageISOOutputAndFailure(t *testing.T) {
	lab := newBootLab(t, "a", "b")
	perNode := lab.iso.URL() + "/nodes/b.iso"
	shared := lab.iso.URL() + "/shared.iso"
	env := lab.env(&bootSteps{m: map[string][]byte{}}, nil)
	env.Outputs["iso"] = json.RawMessage(fmt.Sprintf(`{"url":%q,"nodes":{"b":{"url":%q}}}`, shared, perNode))
	lab.sims["a"].Inject(bmctest.Fault{Op: "insert", Status: 400, MessageID: "IDRAC.2.8.RAC0904"})
	out, err := fastBoot().Run(context.Background(), env)
	if err == nil || !strings.Contains(err.Error(), "1 of 2 node(s) failed (a)") || !strings.Contains(err.Error(), "iso.baseURL") {
		t.Fatalf("want a failure naming node a and the remedy, got %v", err)
	}
	if o := out.(BootOutput); len(o.Failed) != 1 || o.Failed[0] != "a" {
		t.Errorf("failed %v", o.Failed)
	}
	if st := lab.sims["b"].Stats(); st.BootedFrom != perNode {
		t.Errorf("b booted from %q, want its per-node ISO %q", st.BootedFrom, perNode)
	}
	if st := lab.sims["a"].Stats(); st.PowerActions != 0 {
		t.Errorf("a was powered although its media failed")
	}
	lines, err := fastBoot().Plan(context.Background(), env)
	if err != nil || len(lines) != 2 || !strings.Contains(lines[0], shared) {
		t.Errorf("plan %q %v", lines, err)
	}
}

func TestBootStepKeysMatchPipeline(t *testing.T) {
	if got, want := bmc.StepKey("w1", bmc.StepPower), pipeline.NodeStep("w1", bmc.StepPower); got != want {
		t.Errorf("bmc.StepKey = %q, pipeline.NodeStep = %q", got, want)
	}
}

func TestBootStageISOServerDown(t *testing.T) {
	lab := newBootLab(t, "solo")
	lab.iso.Close()
	var events []pipeline.Event
	env := lab.env(&bootSteps{m: map[string][]byte{}}, &events)
	served := 0
	stage := fastBoot()
	stage.Serve = func(context.Context, *pipeline.Env) error { served++; return nil }
	_, err := stage.Run(context.Background(), env)
	if err == nil || !strings.Contains(err.Error(), "solo") {
		t.Fatalf("want the node to fail, got %v", err)
	}
	warned := false
	for _, e := range events {
		warned = warned || (e.Kind == pipeline.Warning && strings.Contains(e.Message, "bootstrap serve"))
	}
	if !warned || served != 1 {
		t.Errorf("warned %t, Serve called %d times", warned, served)
	}
	if st := lab.sims["solo"].Stats(); st.PowerActions != 0 {
		t.Error("powered a node whose ISO cannot be read")
	}
}

func TestBootStageNeedsISOURL(t *testing.T) {
	lab := newBootLab(t, "n")
	lab.site.ISO = site.ISO{}
	_, err := fastBoot().Run(context.Background(), lab.env(&bootSteps{m: map[string][]byte{}}, nil))
	if err == nil || !strings.Contains(err.Error(), "iso.baseURL") {
		t.Fatalf("want an error naming iso.baseURL, got %v", err)
	}
	if st := lab.sims["n"].Stats(); st.Writes != 0 {
		t.Error("touched the BMC without an ISO URL")
	}
}
