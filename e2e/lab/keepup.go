package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/term"

	"github.com/bootstrap-dev/bootstrap/e2e/lab/harness"
	"github.com/bootstrap-dev/bootstrap/internal/stages"
)

// interactive reports whether someone is at a terminal to press Ctrl-C: stdin is a terminal and
// CI is not set. Otherwise (CI, a pipe, `make demo </dev/null`) the demo must end by itself.
func interactive() bool {
	return os.Getenv("CI") == "" && term.IsTerminal(int(os.Stdin.Fd()))
}

// stayingUp is what the demo prints while the lab stays up: what works now and how to use it.
func stayingUp(l *harness.Lab, report string) string {
	var b strings.Builder
	b.WriteString("\nThe lab stays up, so what the demo printed works; Ctrl-C stops it.\n")
	if report != "" {
		fmt.Fprintf(&b, "  evidence report  file://%s\n", report)
	}
	if kc := stages.Kubeconfig(filepath.Join(l.Dir, ".bootstrap")); fileExists(kc) {
		fmt.Fprintf(&b, "  cluster API      export KUBECONFIG=%s   (the lab's kube-apiserver; it has no web console)\n", kc)
	}
	fmt.Fprintf(&b, "  CA of every TLS stand-in: %s\n", filepath.Join(l.Dir, harness.CAFile))
	b.WriteString(l.Describe())
	fmt.Fprintf(&b, "  try: bootstrap status -f %s\n", l.SiteFile)
	return b.String()
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
