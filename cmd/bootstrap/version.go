package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// Stamped by `make build` (scripts/version.sh): -ldflags "-X main.version=... -X main.commit=...
// -X main.commitTime=...". Empty in a plain `go build`; buildInfo then reads what the go command
// recorded (the module version of `go install ...@vX`, the VCS settings when -buildvcs is on).
var (
	version    string
	commit     string
	commitTime string
)

// BuildInfo is what `bootstrap version`, `--version`, the journal's run records and the evidence
// report say about this binary.
type BuildInfo struct {
	Version    string            `json:"version"`
	Commit     string            `json:"commit,omitempty"`
	CommitTime string            `json:"commitTime,omitempty"`
	Modified   bool              `json:"modified,omitempty"`
	Go         string            `json:"go"`
	Platform   string            `json:"platform"`
	Libraries  map[string]string `json:"libraries,omitempty"`
}

// buildInfo gathers the stamp and the go command's build information.
func buildInfo() BuildInfo {
	b := BuildInfo{Version: version, Commit: commit, CommitTime: commitTime, Go: runtime.Version(),
		Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if b.Version == "" && bi.Main.Version != "" {
			b.Version = bi.Main.Version // "(devel)" when built from a checkout without VCS stamping
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if b.Commit == "" {
					b.Commit = s.Value
				}
			case "vcs.time":
				if b.CommitTime == "" {
					b.CommitTime = s.Value
				}
			case "vcs.modified":
				b.Modified = s.Value == "true"
			}
		}
		for _, d := range bi.Deps {
			switch d.Path {
			case "github.com/regclient/regclient", "github.com/bmc-toolbox/bmclib/v2",
				"github.com/spf13/cobra", "golang.org/x/crypto":
				if b.Libraries == nil {
					b.Libraries = map[string]string{}
				}
				b.Libraries[d.Path] = d.Version
			}
		}
	}
	if b.Version == "" {
		b.Version = "(devel)"
	}
	if strings.HasSuffix(b.Version, "+dirty") {
		b.Modified = true
	}
	return b
}

// versionString is the one line both `bootstrap version` and `bootstrap --version` print.
func versionString() string {
	b := buildInfo()
	var parts []string
	if b.Commit != "" {
		c := b.Commit
		if len(c) > 12 {
			c = c[:12]
		}
		if b.CommitTime != "" {
			c += " " + b.CommitTime
		}
		parts = append(parts, "commit "+c)
	}
	parts = append(parts, b.Go, b.Platform)
	return fmt.Sprintf("bootstrap %s (%s)", b.Version, strings.Join(parts, ", "))
}

func newVersionCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of bootstrap and the libraries it was built with",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if g.json() {
				setResult(cmd, buildInfo())
				return nil
			}
			fmt.Fprintln(g.stdout, versionString())
			return nil
		},
	}
}
