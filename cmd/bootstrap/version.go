package main

import (
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func newVersionCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of bootstrap and the libraries it was built with",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			info := map[string]string{"version": version, "go": runtime.Version()}
			if bi, ok := debug.ReadBuildInfo(); ok {
				for _, d := range bi.Deps {
					switch d.Path {
					case "github.com/regclient/regclient", "github.com/bmc-toolbox/bmclib/v2",
						"github.com/spf13/cobra", "golang.org/x/crypto":
						info[d.Path] = d.Version
					}
				}
			}
			if g.json() {
				return json.NewEncoder(g.stdout).Encode(info)
			}
			fmt.Fprintf(g.stdout, "bootstrap %s (%s)\n", info["version"], info["go"])
			return nil
		},
	}
}
