package main

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/bootstrap-dev/bootstrap/internal/pipeline"
)

// TestExitCodeTable drives a command to every documented exit code and keeps the README's table
// equal to exitTable.
func TestExitCodeTable(t *testing.T) {
	dir := t.TempDir()
	site := writeLabSite(t, dir, "canary-exit")
	bad := filepath.Join(dir, "bad.yaml")
	write(t, bad, []byte("apiVersion: bootstrap.openshift.io/v1alpha1\nkind: Site\nbogus: 1\n"), 0o644)
	typo := filepath.Join(dir, "typo.yaml")
	type drive func(t *testing.T) (int, string)
	cli := func(args ...string) drive {
		return func(t *testing.T) (int, string) {
			code, out, errs := run(t, args...)
			return code, out + errs
		}
	}
	pipe := func(w *world, cancel bool, args ...string) drive {
		return func(t *testing.T) (int, string) {
			code, out, errs := runWith(t, w, cancel, args...)
			return code, out + errs
		}
	}
	edited := writeLabSite(t, t.TempDir(), "canary-exit") // a journal of its own, edited in its middle
	editJournal := func(t *testing.T) (int, string) {
		if code, out, errs := runWith(t, &world{}, false, "run", "-f", edited); code != exitOK {
			t.Fatalf("run: exit %d\n%s%s", code, out, errs)
		}
		journal := pipeline.JournalPath(filepath.Join(filepath.Dir(edited), ".bootstrap"))
		b := must(os.ReadFile(journal))
		write(t, journal, bytes.Replace(b, []byte(`"done":"mirror"`), []byte(`"done":"MIRROR"`), 1), 0o600)
		return cli("status", "-f", edited)(t)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedPort := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	locked := func(t *testing.T) (int, string) {
		work := filepath.Join(dir, ".bootstrap")
		if err := os.MkdirAll(work, 0o700); err != nil {
			t.Fatal(err)
		}
		lk, err := pipeline.AcquireLock(work, "run (held by test)")
		if err != nil {
			t.Fatal(err)
		}
		defer lk.Release()
		return cli("run", "-f", site)(t)
	}
	cases := map[int][]struct {
		name  string
		drive drive
	}{
		exitOK: {{"validate a valid profile", cli("validate", "-f", site)},
			{"run over every stage", pipe(&world{}, false, "run", "-f", site)}},
		exitFailure: {{"a stage failed", pipe(&world{fail: "mirror"}, false, "replay", "mirror", "-f", site)},
			{"no -f", cli("run")}, {"unknown stage", cli("replay", "nosuchstage", "-f", site)},
			{"unknown log level", cli("status", "-f", site, "--log-level", "loud")}},
		exitPreflight: {{"preflight with a FAIL (no lab running)", cli("preflight", "-f", site)}},
		exitInvalid: {{"plan on a missing profile", cli("plan", "-f", typo)}, {"status on a missing profile", cli("status", "-f", typo)},
			{"plan on an invalid profile", cli("plan", "-f", bad)}, {"status on an invalid profile", cli("status", "-f", bad)},
			{"validate an invalid profile", cli("validate", "-f", bad)}, {"run on a missing profile", cli("run", "-f", typo)},
			{"validate a missing profile", cli("validate", "-f", typo)}, {"report on a missing profile", cli("report", "-f", typo)},
			{"gather on a missing profile", cli("gather", "-f", typo)}, {"preflight on a missing profile", cli("preflight", "-f", typo)}},
		exitLocked:    {{"run while another holds the work dir", locked}},
		exitPartial:   {{"gather with every source failing", cli("gather", "-f", site, "--no-bmc", "--ssh-port", closedPort, "--out", filepath.Join(dir, "g.tgz"))}},
		exitIntegrity: {{"status on an edited journal", editJournal}},
		exitInterrupted: {{"Ctrl-C in run", pipe(&world{block: "mirror"}, true, "run", "-f", writeLabSite(t, t.TempDir(), "canary-exit"))},
			{"Ctrl-C in replay", pipe(&world{block: "handoff"}, true, "replay", "handoff", "-f", writeLabSite(t, t.TempDir(), "canary-exit"))}},
	}
	readme := readREADME(t)
	for _, row := range exitTable() {
		if !strings.Contains(readme, fmt.Sprintf("| %d | %s | %s |", row.Code, row.Meaning, row.When)) {
			t.Errorf("README's exit-code table lacks the row for %d (%s: %s)", row.Code, row.Meaning, row.When)
		}
		if len(cases[row.Code]) == 0 {
			t.Errorf("exit %d (%s) has no test", row.Code, row.Meaning)
		}
		for _, c := range cases[row.Code] {
			t.Run(fmt.Sprintf("%d/%s", row.Code, c.name), func(t *testing.T) {
				if code, out := c.drive(t); code != row.Code {
					t.Errorf("exit %d, want %d (%s)\n%s", code, row.Code, row.Meaning, out)
				}
			})
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// -v is verbosity, as oc's and kubectl's: it never prints the version.
func TestVIsVerbosityNotVersion(t *testing.T) {
	dir := t.TempDir()
	site := writeLabSite(t, dir, "canary-v")
	version := versionString()
	if code, out, errs := run(t, "-v"); code != exitFailure || strings.Contains(out+errs, version) || !strings.Contains(errs, "--version") {
		t.Errorf("-v: exit %d\n%s%s", code, out, errs)
	}
	if code, out, _ := run(t, "--version"); code != exitOK || !strings.Contains(out, version) {
		t.Errorf("--version: exit %d\n%s", code, out)
	}
	for _, args := range [][]string{{"status", "-f", site, "-v", "5"}, {"status", "-f", site, "--log-level", "warn"}} {
		if code, out, errs := run(t, args...); code != exitOK || strings.Contains(out, version) {
			t.Errorf("%v: exit %d\n%s%s", args, code, out, errs)
		}
	}
}
