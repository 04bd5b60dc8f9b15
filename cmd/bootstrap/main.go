// Command bootstrap takes a site from bare metal to a GitOps-managed OpenShift cluster.
package main

import (
	"os"
)

func main() {
	os.Exit(Execute(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
