package main

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// demo runs the binary's run and status against the lab's profile, while the lab is up, returns
// the run's exit code, and stops the lab afterwards.
func TestDemo(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "calls")
	lab := filepath.Join(dir, "lab")
	// A stand-in for bin/bootstrap: records its arguments, checks the lab's DNS answers during
	// the run (a TCP connect to the profile's dnsServers port), and fails `run` with code 3.
	bin := filepath.Join(dir, "bootstrap")
	script := `#!/bin/sh
echo "$@" >> ` + log + `
dns=$(sed -n 's/.*"\(127\.[0-9.]*:[0-9]*\)".*/\1/p' "$3" | grep '\.53:' | head -1)
if bash -c "exec 3<>/dev/tcp/${dns%:*}/${dns##*:}" 2>/dev/null; then up=up; else up=down; fi
echo "dns=$dns $up" >> ` + log + `
[ "$1" = run ] && exit 3
exit 0
`
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := run([]string{"--", "demo", "--bin", bin, "--dir", lab}, &out, &errb)
	if code != 3 {
		t.Fatalf("exit %d, want the run's 3\nstdout:\n%s\nstderr:\n%s", code, out.String(), errb.String())
	}
	calls, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	site := filepath.Join(lab, "site.yaml")
	lines := strings.Split(strings.TrimSpace(string(calls)), "\n")
	report := "report -f " + site + " --format html --out " + filepath.Join(lab, "report.html")
	if len(lines) != 6 || lines[0] != strings.TrimSpace("run -f "+site+" "+untilFlag()) || lines[2] != "status -f "+site || lines[4] != report {
		t.Fatalf("calls:\n%s", calls)
	}
	dns, state, _ := strings.Cut(strings.TrimPrefix(lines[1], "dns="), " ")
	if dns == "" || state != "up" {
		t.Fatalf("the lab's DNS server should answer during the run:\n%s", calls)
	}
	// The lab is down after the demo: nothing answers on the DNS port any more.
	if c, err := net.DialTimeout("tcp", dns, time.Second); err == nil {
		c.Close()
		t.Errorf("%s still answers after the demo", dns)
	}
	if !strings.Contains(out.String(), "lab stopped") {
		t.Errorf("stdout:\n%s", out.String())
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{nil, {"fly"}, {"demo"}, {"up", "--bogus"}} {
		var out, errb bytes.Buffer
		if code := run(args, &out, &errb); code != 2 || errb.Len() == 0 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and a usage message", args, code, errb.String())
		}
	}
}

// untilFlag is the --until the demo passes while the lab plays no cluster.
func untilFlag() string {
	if demoUntil == "" {
		return ""
	}
	return "--until " + demoUntil
}
