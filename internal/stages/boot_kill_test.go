package stages

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/bootstrap-dev/bootstrap/internal/isoserver"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/bmc"
	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

const bootChildEnv = "BOOT_STAGE_KILL_CHILD"

// runBootChild is the bootstrap process of the kill test: the real runner and journal, the boot
// stage only. It runs when the test binary is re-executed with bootChildEnv set.
func runBootChild(t *testing.T, sitePath, workDir string) {
	data, err := os.ReadFile(sitePath)
	if err != nil {
		t.Fatal(err)
	}
	var s site.Site
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	r := &pipeline.Runner{Stages: []pipeline.Stage{fastBoot()}, Site: &s, WorkDir: workDir, Command: "run"}
	if err := r.Run(context.Background(), pipeline.RunOptions{}); err != nil {
		fmt.Fprintln(os.Stderr, "run:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// TestBootStageKillResume: 50 simulated iDRACs (kept in this process so their power counters
// span both runs), `bootstrap run` in a child process killed with SIGKILL in the middle of the
// boot stage, then run again: the journal resumes the attempt, no node is powered twice, every
// node ends booted from the ISO, and the password never reaches the journal.
func TestBootStageKillResume(t *testing.T) {
	if p := os.Getenv(bootChildEnv); p != "" {
		runBootChild(t, p, os.Getenv(bootChildEnv+"_WORKDIR"))
		return
	}
	if testing.Short() {
		t.Skip("spawns child processes")
	}
	names := make([]string, 50)
	for i := range names {
		names[i] = fmt.Sprintf("node-%02d", i)
	}
	lab := newBootLab(t, names...)
	want := lab.iso.URL() + "/" + DefaultISOName
	dir := t.TempDir()
	work := filepath.Join(dir, ".bootstrap")
	if err := os.MkdirAll(work, 0o700); err != nil {
		t.Fatal(err)
	}
	sitePath := filepath.Join(dir, "site.json")
	data, _ := json.Marshal(lab.site)
	if err := os.WriteFile(sitePath, data, 0o600); err != nil {
		t.Fatal(err)
	}
	child := func() (*exec.Cmd, *bytes.Buffer) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestBootStageKillResume$")
		cmd.Env = append(os.Environ(), bootChildEnv+"="+sitePath, bootChildEnv+"_WORKDIR="+work)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		return cmd, &out
	}
	journal := pipeline.JournalPath(work)
	powered := func() map[string]bool {
		entries, _, _ := pipeline.ReadJournal(journal)
		got := map[string]bool{}
		for _, e := range entries {
			if e.Kind == pipeline.EntryStepDone && strings.HasSuffix(e.Step, "/"+bmc.StepPower) {
				got[strings.TrimSuffix(strings.TrimPrefix(e.Step, "node:"), "/"+bmc.StepPower)] = true
			}
		}
		return got
	}

	first, out1 := child()
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(90 * time.Second)
	for len(powered()) < 10 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	_ = first.Process.Signal(syscall.SIGKILL)
	_ = first.Wait()
	before := powered()
	if len(before) == 0 || len(before) == len(names) {
		t.Fatalf("kill landed outside the middle (%d nodes powered): %s", len(before), out1)
	}

	second, out2 := child()
	if err := second.Run(); err != nil {
		t.Fatalf("resumed run: %v\n%s", err, out2)
	}
	for _, n := range names { // a wrong extra boot completes and is counted
		if err := lab.sims[n].Idle(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	key, err := isoserver.TokenKey(work) // the shared ISO served here: each node's URL carries its token
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		want := isoserver.TokenURL(want, key, n)
		st := lab.sims[n].Stats()
		if st.PowerActions != 1 {
			t.Errorf("%s: %d power actions (power step journaled before the kill: %t), want 1", n, st.PowerActions, before[n])
		}
		if st.BootedFrom != want || st.Inserted != want {
			t.Errorf("%s: booted from %q with %q inserted", n, st.BootedFrom, st.Inserted)
		}
	}
	entries, _, err := pipeline.ReadJournal(journal)
	if err != nil {
		t.Fatal(err)
	}
	status := pipeline.Fold(entries)
	if bs := status.Stage("boot"); bs.State != pipeline.StateSucceeded || bs.Attempt != 1 || bs.Runs != 2 {
		t.Errorf("boot stage: state %s attempt %d runs %d; want succeeded, one attempt resumed once", bs.State, bs.Attempt, bs.Runs)
	}
	raw, _ := os.ReadFile(journal)
	if bytes.Contains(raw, []byte(bootTestPassword)) {
		t.Error("the BMC password is in the journal")
	}
	t.Logf("killed with %d of %d nodes' power step journaled; resumed to completion", len(before), len(names))
}
