// Command lab runs the local lab: stand-ins for a site's services on loopback and the site
// profile that points bootstrap at them.
//
//	go run ./e2e/lab up [--dir D] [--ntp-offset 5m]   start, print the profile's path, run until Ctrl-C
//	go run ./e2e/lab demo --bin bin/bootstrap [--dir D] [--ntp-offset 5m]  start, run, status, report;
//	    on a terminal the lab then stays up until Ctrl-C, so what the demo printed works; else it stops
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/bootstrap-dev/bootstrap/e2e/lab/harness"
)

func main() {
	if code, ok := guard(os.Args[1:]); ok {
		os.Exit(code)
	}
	// A write to a closed pipe (`make lab | tee`, tee gone after Ctrl-C) returns EPIPE instead of
	// killing the lab before it has stopped what it started.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `usage: lab up [--dir D] [--ntp-offset DURATION]
       lab demo --bin PATH [--dir D] [--ntp-offset DURATION]

up    starts the lab's stand-ins on loopback, writes a site profile into the lab dir and stays
      up until interrupted (Ctrl-C or SIGTERM), then stops everything it started.
demo  starts the lab, runs "PATH run -f <lab site>", "PATH status" and "PATH report"; on a terminal
      the lab then stays up until Ctrl-C so what the demo printed works (the report, the registry,
      the kubeconfig); without one (CI, a pipe) it stops and says the lab's addresses are gone.
`

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "--" { // `go run ./e2e/lab -- demo` passes the separator on
		args = args[1:]
	}
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	fs := flag.NewFlagSet("lab "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", "", "lab dir (default: a new directory under $TMPDIR)")
	offset := fs.Duration("ntp-offset", 0, "shift the lab NTP clock by this much (makes the clock check fail)")
	bin := fs.String("bin", "", "demo: the bootstrap binary to run")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	var err error
	switch args[0] {
	case "up":
		err = up(ctx, *dir, *offset, stdout)
	case "demo":
		if *bin == "" {
			fmt.Fprint(stderr, "lab demo: --bin is required\n"+usage)
			return 2
		}
		var code int
		code, err = demo(ctx, *dir, *offset, *bin, stdout, stderr, interactive())
		if err == nil {
			return code
		}
	default:
		fmt.Fprintf(stderr, "lab: unknown command %q\n%s", args[0], usage)
		return 2
	}
	if err != nil {
		fmt.Fprintf(stderr, "lab: %v\n", err)
		return 1
	}
	return 0
}

func start(ctx context.Context, dir string, offset time.Duration, stdout io.Writer) (*harness.Lab, error) {
	if dir == "" {
		d, err := os.MkdirTemp("", "bootstrap-lab-")
		if err != nil {
			return nil, err
		}
		dir = d
	}
	l, err := harness.New(dir, harness.Default(harness.Options{NTPOffset: offset})...)
	if err != nil {
		return nil, err
	}
	if err := l.Up(ctx); err != nil {
		return nil, err
	}
	fmt.Fprintf(stdout, "lab up on %s:\n%s  site profile: %s\n", l.Net, l.Describe(), l.SiteFile)
	return l, nil
}

func up(ctx context.Context, dir string, offset time.Duration, stdout io.Writer) error {
	l, err := start(ctx, dir, offset, stdout)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "try: bootstrap preflight -f %s\nCtrl-C stops the lab.\n", l.SiteFile)
	<-ctx.Done()
	fmt.Fprintln(stdout, "lab: stopping")
	return down(l)
}

// demoUntil is the last stage the demo runs ("" for all: the lab plays the cluster).
const demoUntil = ""

// demo runs the pipeline against the lab; its exit code is the run's (status is shown either way).
// With keepUp the lab stays up after the report until ctx ends (Ctrl-C), so the addresses the
// demo printed lead somewhere; without it the lab stops and the demo says they are gone.
func demo(ctx context.Context, dir string, offset time.Duration, bin string, stdout, stderr io.Writer, keepUp bool) (int, error) {
	l, err := start(ctx, dir, offset, stdout)
	if err != nil {
		return 1, err
	}
	// The lab plays the cluster (harness.Cluster: kube-apiserver with the CRDs and a player), so
	// the demo runs every stage.
	args := []string{"run", "-f", l.SiteFile}
	if demoUntil != "" {
		args = append(args, "--until", demoUntil)
	}
	code := step(ctx, bin, stdout, stderr, args...)
	report := ""
	if ctx.Err() == nil {
		step(ctx, bin, stdout, stderr, "status", "-f", l.SiteFile)
		if r := filepath.Join(l.Dir, "report.html"); step(ctx, bin, stdout, stderr, "report", "-f", l.SiteFile, "--format", "html", "--out", r) == 0 {
			report = r
		}
	}
	if keepUp && ctx.Err() == nil {
		fmt.Fprint(stdout, stayingUp(l, report))
		<-ctx.Done()
		fmt.Fprintln(stdout, "lab: stopping")
	}
	if err := down(l); err != nil {
		return 1, err
	}
	fmt.Fprintf(stdout, "lab stopped; its files stay in %s", l.Dir)
	if report != "" {
		fmt.Fprintf(stdout, " (the evidence report, a file: %s)", report)
	}
	fmt.Fprintln(stdout)
	if !keepUp {
		fmt.Fprintln(stdout, "The lab's services named above (registry, Git, BMCs, cluster API, kubeconfig) stopped with it; "+
			"`make lab` starts a lab that stays up until Ctrl-C.")
	}
	return code, nil
}

// step runs the binary with args and returns its exit code. On Ctrl-C the child (in our process
// group, so it got the signal too) is given time to record its state before it is killed.
func step(ctx context.Context, bin string, stdout, stderr io.Writer, args ...string) int {
	fmt.Fprintf(stdout, "\n$ %s %s\n", bin, strings.Join(args, " "))
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 30 * time.Second
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee) && ee.ExitCode() > 0:
		return ee.ExitCode()
	default:
		fmt.Fprintf(stderr, "lab: %s: %v\n", bin, err)
		return 1
	}
}

func down(l *harness.Lab) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return l.Down(ctx)
}
