package preflight

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/bmc"
	"github.com/bootstrap-dev/bootstrap/internal/finding"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// bmcISOName is the file the boot stage asks for under iso.baseURL (stages.DefaultISOName).
const bmcISOName = "agent.x86_64.iso"

// bmcChecks checks every node's BMC read-only through bmc.Preflight (GETs with basic auth: not
// even a session is created): reachability, TLS, credentials, Redfish version, firmware floor,
// virtual CD slot, Cd boot target, stale media, ISO URL length and MAC truth. One BMC read
// serves all of a node's checks; each check is one row of the table.
//
// The lab (e2e/lab/harness/bmc.go) runs one simulator per node, so its preflight covers these.
func bmcChecks(s *site.Site, o Options) []Check {
	defaultURL := bmcISOURL(s)
	var out []Check
	for _, n := range s.Nodes {
		if n.BMC.Address == "" {
			continue
		}
		macs := make([]string, 0, len(n.Interfaces))
		for _, i := range n.Interfaces {
			macs = append(macs, i.MACAddress)
		}
		url := defaultURL
		if u := o.ISOURLs[n.Name]; u != "" {
			url = u
		}
		ref := n.BMC.Password
		p := &bmcProbe{node: bmc.PreflightNode{
			Target: bmc.Target{Node: n.Name, Address: n.BMC.Address, Username: n.BMC.Username, BootMAC: n.BootMAC,
				CAFile: resolvePath(s, n.BMC.CAFile), Insecure: n.BMC.Insecure,
				Password: func() (string, error) {
					b, err := site.ReadSecret(site.SecretRef{File: resolvePath(s, ref.File), Env: ref.Env})
					return string(b), err
				}},
			Expect: bmc.Expect{BootMAC: n.BootMAC, MACs: macs, ISOURL: url, Vendor: n.BMC.Vendor},
		}}
		for _, check := range bmc.PreflightCheckNames() {
			name := "bmc " + n.Name + " " + strings.TrimPrefix(check, "bmc-")
			out = append(out, Func(name, CategoryBMC, func(ctx context.Context) finding.Finding { return p.result(ctx, check) }))
		}
	}
	return out
}

// bmcProbe reads one node's BMC once for all of its checks.
type bmcProbe struct {
	node     bmc.PreflightNode
	once     sync.Once
	findings []finding.Finding
}

func (p *bmcProbe) result(ctx context.Context, check string) finding.Finding {
	p.once.Do(func() {
		p.findings = bmc.Preflight(ctx, p.node, bmc.WithRetry(2, 500*time.Millisecond), bmc.WithCallTimeout(15*time.Second))
	})
	var blocker *finding.Finding
	for i, f := range p.findings {
		if f.Check == check {
			return finding.Finding{Status: f.Status, Message: f.Message, Remedy: f.Remedy}
		}
		if f.Status == finding.Fail && blocker == nil {
			blocker = &p.findings[i]
		}
	}
	if blocker != nil {
		name := "bmc " + p.node.Target.Node + " " + strings.TrimPrefix(blocker.Check, "bmc-") // as the table names it
		return finding.Warnf("fix "+name+" first", "not checked: %s failed", name)
	}
	return finding.Passf("not applicable to this BMC") // e.g. the iDRAC job queue on another vendor's BMC
}

// bmcISOURL is the URL the BMCs will be given: iso.baseURL (default http://<serveAddress>) and
// the agent ISO's name, as the boot stage computes it before the iso stage publishes its own.
func bmcISOURL(s *site.Site) string {
	base := strings.TrimRight(s.ISO.BaseURL, "/")
	if base == "" && s.ISO.ServeAddress != "" {
		base = "http://" + s.ISO.ServeAddress
	}
	return base + "/" + bmcISOName
}
