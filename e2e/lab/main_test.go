package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
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
	// Without a terminal the demo ends by itself and says the lab's addresses went with it.
	if !strings.Contains(out.String(), "lab stopped") || !strings.Contains(out.String(), "stopped with it; `make lab` starts a lab that stays up") {
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

// syncBuffer is a buffer the demo writes from its goroutine while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// On a terminal the demo keeps what it shows: after the report the lab stays up (its DNS
// answers, the report is there) until Ctrl-C, then stops.
func TestDemoStaysUpUntilCtrlC(t *testing.T) {
	dir := t.TempDir()
	lab := filepath.Join(dir, "lab")
	bin := filepath.Join(dir, "bootstrap")
	// run and status succeed; report writes the file it is asked for (its last argument)
	script := "#!/bin/sh\n[ \"$1\" = report ] && for a; do out=$a; done && echo '<html>' > \"$out\"\nexit 0\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, ctrlC := context.WithCancel(context.Background())
	defer ctrlC()
	var out, errb syncBuffer
	done := make(chan int, 1)
	go func() {
		code, err := demo(ctx, lab, 0, bin, &out, &errb, true)
		if err != nil {
			t.Error(err)
		}
		done <- code
	}()
	deadline := time.Now().Add(10 * time.Minute) // the lab starts slowly on a busy machine
	for !strings.Contains(out.String(), "Ctrl-C stops it") {
		if time.Now().After(deadline) {
			t.Fatalf("the demo never said it stays up:\n%s\n%s", out.String(), errb.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	report := filepath.Join(lab, "report.html")
	if !strings.Contains(out.String(), "evidence report  file://"+report) {
		t.Errorf("the report's address is not shown:\n%s", out.String())
	}
	dns := ""
	// every address the demo printed still answers: the DNS server's, for one
	site, err := os.ReadFile(filepath.Join(lab, "site.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(site), "\n") {
		if strings.Contains(l, ".53:") {
			dns = strings.Trim(strings.TrimSpace(l), `",[]`)
		}
	}
	time.Sleep(time.Second)
	c, err := net.DialTimeout("tcp", dns, time.Second)
	if err != nil {
		t.Fatalf("the lab's DNS %s does not answer while the demo says the lab is up: %v", dns, err)
	}
	c.Close()
	select {
	case code := <-done:
		t.Fatalf("the demo ended (exit %d) before Ctrl-C", code)
	default:
	}
	ctrlC()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit %d after Ctrl-C, want the run's 0", code)
		}
	case <-time.After(time.Minute):
		t.Fatal("the demo did not stop after Ctrl-C")
	}
	if c, err := net.DialTimeout("tcp", dns, time.Second); err == nil {
		c.Close()
		t.Errorf("%s still answers after Ctrl-C", dns)
	}
}
