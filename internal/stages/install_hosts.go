package stages

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

// DefaultHostsGrace is how long the install stage waits for every node to appear on the
// rendezvous host's API before it stops and names the ones that have not. 15 minutes covers, from
// the boot stage's power action: a large server's POST and memory training (3–8 min on
// multi-socket and GPU machines), the live ISO booting over virtual media (2–4 min) and the agent
// registering (under a minute); a node not seen by then will not be seen by waiting the
// installer's 60-minute bootstrap timeout either, and a node that never appears keeps the install
// from starting at all, so stopping loses nothing.
const DefaultHostsGrace = 15 * time.Minute

// hostsWatch tracks which nodes the rendezvous host has reported (any host finding names it) and,
// after the grace, cancels the install with a *HostsMissingError naming those it has not.
type hostsWatch struct {
	mu    sync.Mutex
	nodes []string
	seen  map[string]bool
	done  bool // every node seen, or bootstrap complete: nothing left to watch
}

func newHostsWatch(nodes []string) *hostsWatch {
	return &hostsWatch{nodes: nodes, seen: map[string]bool{}}
}

// saw records a host the rendezvous API reported.
func (w *hostsWatch) saw(host string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seen[host] = true
}

// stop ends the watch (bootstrap completed: every node that matters has joined).
func (w *hostsWatch) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.done = true
}

// missing returns the nodes not seen yet, sorted (none once stopped).
func (w *hostsWatch) missing() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return nil
	}
	var out []string
	for _, n := range w.nodes {
		if !w.seen[n] {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// run cancels the install after grace when some node has not appeared; it returns when ctx ends.
func (w *hostsWatch) run(ctx context.Context, grace time.Duration, unverified map[string]string, cancel context.CancelCauseFunc) {
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
		if m := w.missing(); len(m) > 0 {
			cancel(&HostsMissingError{Nodes: m, Grace: grace, Unverified: unverified, All: len(m) == len(w.nodes)})
		}
	}
}

// HostsMissingError is the install stopped because some nodes never appeared on the rendezvous
// host's API within the grace. Its remedy reboots exactly those nodes into the ISO (`replay boot`
// forces them, whatever the journal says), so following it changes the outcome.
type HostsMissingError struct {
	Nodes []string
	Grace time.Duration
	// Unverified maps the missing nodes boot recorded as "booted, unverified" to why.
	Unverified map[string]string
	// All is set when no node appeared: the rendezvous host itself (its API) is not up.
	All bool
}

func (e *HostsMissingError) Error() string {
	var parts []string
	for _, n := range e.Nodes {
		if why := e.Unverified[n]; why != "" {
			n += " (booted, unverified: " + why + ")"
		}
		parts = append(parts, n)
	}
	msg := fmt.Sprintf("%d node(s) not seen by the rendezvous host after %s: %s", len(e.Nodes), e.Grace, strings.Join(parts, "; "))
	if e.All {
		msg += "; no node appeared: the rendezvous host's API never answered or listed no host"
	}
	return msg
}

// Remedy implements pipeline.Remedier.
func (e *HostsMissingError) Remedy() string {
	check := "check each one's BMC console (is the agent ISO booting, or an old OS or a PXE prompt?), its boot order and one-time boot override, " +
		"that it can reach the ISO URL and the rendezvous IP on the machine network"
	if e.All {
		check += ", and that the rendezvous node's console shows the agent's assisted-service starting"
	}
	return check + "; then boot them again with `bootstrap replay boot --node " + strings.Join(e.Nodes, ",") +
		"` (forces a power cycle into the ISO) and resume with `bootstrap run`"
}
