// Command bootstrap takes a site from bare metal to a GitOps-managed OpenShift cluster.
package main

import (
	"net/http"
	"os"
)

func main() {
	keepConnections()
	os.Exit(Execute(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// keepConnections raises how many idle connections an HTTP client keeps per host. The registry
// client clones http.DefaultTransport for every registry; Go's default keeps 2 idle connections
// per host, so with --parallel 12 most finished requests closed their connection and the next one
// opened (with TLS: handshook) a new one, twice as many connections as workers in a mirror test.
// Set once, before anything runs.
func keepConnections() {
	if t, ok := http.DefaultTransport.(*http.Transport); ok {
		t.MaxIdleConnsPerHost = 64
	}
}
