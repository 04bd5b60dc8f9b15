package preflight

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"

	"github.com/miekg/dns"

	"github.com/bootstrap-dev/bootstrap/internal/finding"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// errNotFound is returned by a lookup when the name does not exist (NXDOMAIN or no records).
var errNotFound = errors.New("no such name")

// lookupFunc resolves a fully qualified name to its A and AAAA addresses.
type lookupFunc func(ctx context.Context, fqdn string) ([]netip.Addr, error)

// resolverTarget is one place names are looked up: a DNS server from the profile, or the jump
// host's own resolver.
type resolverTarget struct {
	label  string
	lookup lookupFunc
}

// dnsTargets returns the configured DNS servers, queried directly (the nodes will use them, so
// the jump host's /etc/hosts must not mask a missing record), or else the system resolver.
func dnsTargets(s *site.Site, o Options) []resolverTarget {
	if len(s.Cluster.DNSServers) == 0 {
		return systemTarget(o)
	}
	var out []resolverTarget
	for _, srv := range s.Cluster.DNSServers {
		addr := srv
		if _, _, err := net.SplitHostPort(srv); err != nil {
			addr = net.JoinHostPort(srv, "53")
		}
		out = append(out, resolverTarget{label: addr, lookup: func(ctx context.Context, fqdn string) ([]netip.Addr, error) {
			return queryServer(ctx, addr, fqdn)
		}})
	}
	return out
}

// systemTarget is the jump host's own resolver (/etc/hosts, then DNS as nsswitch says).
func systemTarget(o Options) []resolverTarget {
	r := o.Resolver
	return []resolverTarget{{label: "system resolver", lookup: func(ctx context.Context, fqdn string) ([]netip.Addr, error) {
		// Rooted, so that the search list cannot turn a missing record into a pass.
		addrs, err := r.LookupNetIP(ctx, "ip", dns.Fqdn(fqdn))
		var de *net.DNSError
		if errors.As(err, &de) && de.IsNotFound {
			return nil, errNotFound
		}
		for i, a := range addrs {
			addrs[i] = a.Unmap()
		}
		return addrs, err
	}}}
}

// queryServer asks one DNS server for the A and AAAA records of fqdn, over UDP with a TCP retry
// when the answer is truncated.
func queryServer(ctx context.Context, server, fqdn string) ([]netip.Addr, error) {
	var out []netip.Addr
	for _, qt := range []uint16{dns.TypeA, dns.TypeAAAA} {
		m := new(dns.Msg)
		m.SetQuestion(dns.Fqdn(fqdn), qt)
		m.RecursionDesired = true
		resp, _, err := (&dns.Client{Net: "udp"}).ExchangeContext(ctx, m, server)
		if err == nil && resp.Truncated {
			resp, _, err = (&dns.Client{Net: "tcp"}).ExchangeContext(ctx, m, server)
		}
		if err != nil {
			return nil, fmt.Errorf("query %s %s: %w", dns.TypeToString[qt], server, err)
		}
		switch resp.Rcode {
		case dns.RcodeSuccess:
		case dns.RcodeNameError:
			continue
		default:
			return nil, fmt.Errorf("query %s %s: %s", dns.TypeToString[qt], server, dns.RcodeToString[resp.Rcode])
		}
		for _, rr := range resp.Answer {
			switch v := rr.(type) {
			case *dns.A:
				if a, ok := netip.AddrFromSlice(v.A.To4()); ok {
					out = append(out, a)
				}
			case *dns.AAAA:
				if a, ok := netip.AddrFromSlice(v.AAAA); ok {
					out = append(out, a)
				}
			}
		}
	}
	if len(out) == 0 { // NXDOMAIN, or a name with no address records
		return nil, errNotFound
	}
	return out, nil
}

// nameCheck is one name that must resolve, and to what.
type nameCheck struct {
	display string                   // name shown in the check's name
	fqdn    func() string            // the name to query (may be random per run)
	want    []netip.Addr             // the addresses it must resolve to; empty: any
	strict  bool                     // extra addresses are a failure (VIP names)
	missing finding.Status           // status when the name does not resolve
	remedy  func(fqdn string) string // what to add to DNS
	// targets overrides where the name is looked up (default: the profile's DNS servers).
	targets []resolverTarget
	// warnOnly caps the verdict at Warn.
	warnOnly bool
}

func dnsChecks(s *site.Site, o Options) []Check {
	c := s.Cluster
	if c.Name == "" || c.BaseDomain == "" {
		return nil
	}
	zone := c.Name + "." + c.BaseDomain
	apiWant, apiNote := parseAddrs(c.APIVIPs), "apiVIPs"
	appsWant, appsNote := parseAddrs(c.IngressVIPs), "ingressVIPs"
	if len(apiWant) == 0 && c.RendezvousIP != "" {
		apiWant, apiNote = parseAddrs([]string{c.RendezvousIP}), "rendezvousIP (no apiVIPs: single node)"
	}
	if len(appsWant) == 0 && c.RendezvousIP != "" {
		appsWant, appsNote = parseAddrs([]string{c.RendezvousIP}), "rendezvousIP (no ingressVIPs: single node)"
	}
	vipRemedy := func(note string, want []netip.Addr) func(string) string {
		return func(fqdn string) string {
			return fmt.Sprintf("Make %s resolve to exactly %s (the %s) on every DNS server the nodes use.", fqdn, joinAddrs(want), note)
		}
	}
	names := []nameCheck{
		{display: "api." + zone, fqdn: fixed("api." + zone), want: apiWant, strict: true, missing: finding.Fail, remedy: vipRemedy(apiNote, apiWant)},
		{display: "api-int." + zone, fqdn: fixed("api-int." + zone), want: apiWant, strict: true, missing: finding.Fail, remedy: vipRemedy(apiNote, apiWant)},
		{display: "*.apps." + zone, fqdn: func() string { return "preflight-" + randomLabel() + ".apps." + zone }, want: appsWant, strict: true, missing: finding.Fail,
			remedy: func(string) string {
				return fmt.Sprintf("Add a wildcard record *.apps.%s resolving to exactly %s (the %s).", zone, joinAddrs(appsWant), appsNote)
			}},
	}
	for _, n := range s.Nodes {
		if n.Name == "" {
			continue
		}
		fqdn := n.Name
		if !strings.Contains(fqdn, ".") {
			fqdn = n.Name + "." + zone
		}
		want := nodeAddrs(n)
		names = append(names, nameCheck{display: fqdn, fqdn: fixed(fqdn), want: want, missing: finding.Warn,
			remedy: func(f string) string {
				if len(want) == 0 {
					return fmt.Sprintf("Add an A/AAAA record for %s (and its PTR) so logs and certificates name the node.", f)
				}
				return fmt.Sprintf("Add an A/AAAA record %s → %s (and its PTR) so logs and certificates name the node.", f, joinAddrs(want))
			}})
	}
	if len(c.DNSServers) > 0 && !allLoopback(c.DNSServers) {
		names = append(names, jumpHostAPI(zone, apiWant, o))
	}
	targets := dnsTargets(s, o)
	var out []Check
	for _, n := range names {
		t := targets
		if n.targets != nil {
			t = n.targets
		}
		out = append(out, Func("dns "+n.display, CategoryDNS, func(ctx context.Context) finding.Finding {
			return n.run(ctx, t)
		}))
	}
	return out
}

// jumpHostAPI checks the API name through the jump host's own resolver. The nodes use the
// profile's DNS servers, but the install and configure stages reach the API from the jump host.
// It is built only when the profile names DNS servers off loopback: servers on loopback can
// only be a lab's (nodes cannot reach them), and its names are not in the host's DNS.
func jumpHostAPI(zone string, want []netip.Addr, o Options) nameCheck {
	return nameCheck{display: "api." + zone + " from the jump host", fqdn: fixed("api." + zone),
		want: want, strict: true, missing: finding.Warn, warnOnly: true, targets: systemTarget(o),
		remedy: func(fqdn string) string {
			return fmt.Sprintf("Point the jump host's resolver (/etc/resolv.conf) at the site DNS, or add \"%s %s\" to /etc/hosts: "+
				"the install and configure stages reach the cluster API from here.", joinAddrs(want[:min(1, len(want))]), fqdn)
		}}
}

// allLoopback reports whether every DNS server ("host" or "host:port") is a loopback address.
func allLoopback(servers []string) bool {
	for _, s := range servers {
		h := s
		if host, _, err := net.SplitHostPort(s); err == nil {
			h = host
		}
		a, err := netip.ParseAddr(h)
		if err != nil || !a.IsLoopback() {
			return false
		}
	}
	return true
}

// run queries every target at once (one slow server must not hide the others' answers); the
// worst verdict wins and every target's answer is reported, in profile order.
func (n nameCheck) run(ctx context.Context, targets []resolverTarget) finding.Finding {
	fqdn := n.fqdn()
	results := make([]finding.Finding, len(targets))
	var wg sync.WaitGroup
	for i, t := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := t.lookup(ctx, fqdn)
			results[i] = n.judge(fqdn, got, err)
			results[i].Message += " (" + t.label + ")"
		}()
	}
	wg.Wait()
	var worst finding.Finding
	msgs := make([]string, len(results))
	for i, r := range results {
		msgs[i] = r.Message
		if i == 0 || r.Status > worst.Status {
			worst = r
		}
	}
	worst.Message = strings.Join(msgs, "; ")
	if n.warnOnly && worst.Status == finding.Fail {
		worst.Status = finding.Warn
	}
	return worst
}

func (n nameCheck) judge(fqdn string, got []netip.Addr, err error) finding.Finding {
	if errors.Is(err, errNotFound) {
		return finding.Finding{Status: n.missing, Message: fqdn + " does not resolve", Remedy: n.remedy(fqdn)}
	}
	if err != nil {
		return finding.Failf("Check that the DNS server answers from the jump host (firewall, address, port).", "%s: %v", fqdn, err)
	}
	slices.SortFunc(got, netip.Addr.Compare)
	got = slices.Compact(got)
	if len(n.want) == 0 {
		return finding.Passf("%s → %s", fqdn, joinAddrs(got))
	}
	var extra, missing []netip.Addr
	for _, a := range got {
		if !slices.Contains(n.want, a) {
			extra = append(extra, a)
		}
	}
	for _, a := range n.want {
		if !slices.Contains(got, a) {
			missing = append(missing, a)
		}
	}
	switch {
	case n.strict && len(extra) > 0, !n.strict && len(extra) == len(got):
		return finding.Failf(n.remedy(fqdn), "%s → %s, want %s", fqdn, joinAddrs(got), joinAddrs(n.want))
	case n.strict && len(missing) > 0:
		return finding.Warnf(n.remedy(fqdn), "%s → %s, missing %s", fqdn, joinAddrs(got), joinAddrs(missing))
	}
	return finding.Passf("%s → %s", fqdn, joinAddrs(got))
}

func fixed(s string) func() string { return func() string { return s } }

func randomLabel() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b)
}

func parseAddrs(ss []string) []netip.Addr {
	var out []netip.Addr
	for _, s := range ss {
		if a, err := netip.ParseAddr(s); err == nil {
			out = append(out, a.Unmap())
		}
	}
	return out
}

func joinAddrs(as []netip.Addr) string {
	s := make([]string, len(as))
	for i, a := range as {
		s[i] = a.String()
	}
	return strings.Join(s, ", ")
}

// nodeAddrs collects the static addresses of a node's nmstate networkConfig
// (interfaces[].ipv4|ipv6.address[].ip), without their prefix lengths.
func nodeAddrs(n site.Node) []netip.Addr {
	var out []netip.Addr
	ifaces, _ := n.NetworkConfig["interfaces"].([]any)
	for _, i := range ifaces {
		im, _ := i.(map[string]any)
		for _, fam := range []string{"ipv4", "ipv6"} {
			fm, _ := im[fam].(map[string]any)
			addrs, _ := fm["address"].([]any)
			for _, a := range addrs {
				am, _ := a.(map[string]any)
				if ip, ok := am["ip"].(string); ok {
					if p, err := netip.ParseAddr(ip); err == nil {
						out = append(out, p.Unmap())
					}
				}
			}
		}
	}
	return out
}
