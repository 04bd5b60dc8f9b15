package preflight

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/bootstrap-dev/bootstrap/internal/finding"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// loopbackControl is a loopback address no VIP uses; a port that accepts there too is held by a
// wildcard listener and says nothing about the VIP.
var loopbackControl = netip.MustParseAddr("127.255.255.254")

// The VIP check asks "does anything already hold this address?" The honest signals, strongest
// first:
//
//   - a TCP connection accepted on one of the probed ports: a host is there and serving;
//   - a complete entry for the address in the kernel's ARP table after the probes (IPv4, same
//     subnet as the jump host): a host answered ARP even if it drops every packet;
//   - an ICMP echo reply from the address (needs a raw or ping socket: root, CAP_NET_RAW or
//     net.ipv4.ping_group_range; without one the message says ICMP was not probed);
//   - a TCP reset: a host (or a firewall rejecting for it) is there.
//
// Silence proves nothing: a host off-subnet that drops everything is invisible. On loopback
// every 127.x address is local, ICMP is always answered, resets mean nothing and a listener on
// 0.0.0.0 accepts on all of them; there only an
// accept that the control address 127.255.255.254 does not also get counts (the lab and tests
// rely on this). TestVIPOnRealLink shows every signal, and the blind spot, on a real veth link
// between two network namespaces.
func vipChecks(s *site.Site, o Options) []Check {
	type vip struct {
		addr string
		role string
	}
	var vips []vip
	seen := map[string]bool{}
	for _, a := range s.Cluster.APIVIPs {
		if !seen[a] {
			seen[a] = true
			vips = append(vips, vip{a, "api"})
		}
	}
	for _, a := range s.Cluster.IngressVIPs {
		if !seen[a] {
			seen[a] = true
			vips = append(vips, vip{a, "ingress"})
		}
	}
	var out []Check
	for _, v := range vips {
		out = append(out, Func(fmt.Sprintf("vip %s (%s) free", v.addr, v.role), CategoryNetwork, func(ctx context.Context) finding.Finding {
			return checkVIP(ctx, v.addr, v.role, o)
		}))
	}
	return out
}

type probeOutcome int

const (
	probeSilent   probeOutcome = iota // timeout, unreachable, filtered
	probeRefused                      // TCP reset
	probeAccepted                     // connection accepted
)

func checkVIP(ctx context.Context, addr, role string, o Options) finding.Finding {
	ip, err := netip.ParseAddr(addr)
	if err != nil {
		return finding.Failf("Fix the address in the site profile.", "%q is not an IP address", addr)
	}
	ip = ip.Unmap()
	if o.ClusterInstalled {
		return finding.Passf("%s: cluster already installed, the %s VIP is expected to answer; not probed", ip, role)
	}
	remedy := fmt.Sprintf("Pick a free address in the machine network for the %s VIP, or find and stop what holds %s (a previous cluster, a load balancer).", role, ip)
	if name, ok := localInterface(ip); ok {
		return finding.Failf(remedy, "%s is in use: the jump host itself holds it (interface %s)", ip, name)
	}
	ports := o.VIPPorts
	pinged := make(chan pingResult, 1)
	if ip.IsLoopback() {
		pinged <- pingUnavailable // every loopback address answers: meaningless
	} else {
		go func() { pinged <- ping(ctx, ip, o.ProbeTimeout) }()
	}
	got := probePorts(ctx, ip, ports, o)
	icmpRes := <-pinged
	var accepted, refused, wildcard []string
	for i, p := range ports {
		switch got[i] {
		case probeAccepted:
			if ip.IsLoopback() && ip.Is4() && probe(ctx, loopbackControl, p, o) == probeAccepted {
				wildcard = append(wildcard, strconv.Itoa(p))
				continue
			}
			accepted = append(accepted, strconv.Itoa(p))
		case probeRefused:
			refused = append(refused, strconv.Itoa(p))
		}
	}
	if len(accepted) > 0 {
		return finding.Failf(remedy, "%s is in use: accepted TCP on port %s", ip, strings.Join(accepted, ", "))
	}
	if ip.Is4() && !ip.IsLoopback() {
		if mac, ok := arpComplete(o.ARPTable, ip); ok {
			// The kernel keeps a resolved entry for a while after its host leaves: a host
			// switched off in the last minute can still show here.
			return finding.Failf(remedy+" If that host was just switched off, wait a minute and check again.",
				"%s is in use: it answered ARP with %s", ip, mac)
		}
	}
	if icmpRes == pingAnswered {
		return finding.Failf(remedy, "%s is in use: it answered ICMP echo", ip)
	}
	ports2 := joinInts(ports)
	if len(refused) > 0 && !ip.IsLoopback() {
		return finding.Warnf("Make sure no host owns "+ip.String()+"; if a firewall rejects for it, this warning is expected.",
			"%s reset TCP on port %s: a host or a rejecting firewall is there", ip, strings.Join(refused, ", "))
	}
	msg := fmt.Sprintf("%s: nothing accepted TCP on %s", ip, ports2)
	switch {
	case ip.IsLoopback():
	case icmpRes == pingSilent:
		msg += ", no ICMP echo reply"
	default:
		msg += "; ICMP not probed (needs root, CAP_NET_RAW or net.ipv4.ping_group_range)"
	}
	if len(wildcard) > 0 {
		msg += fmt.Sprintf(" (port %s answers on every loopback address: a wildcard listener, not counted)", strings.Join(wildcard, ", "))
	}
	return finding.Passf("%s", msg)
}

func probePorts(ctx context.Context, ip netip.Addr, ports []int, o Options) []probeOutcome {
	out := make([]probeOutcome, len(ports))
	var wg sync.WaitGroup
	for i, p := range ports {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = probe(ctx, ip, p, o)
		}()
	}
	wg.Wait()
	return out
}

func probe(ctx context.Context, ip netip.Addr, port int, o Options) probeOutcome {
	d := net.Dialer{Timeout: o.ProbeTimeout}
	c, err := d.DialContext(ctx, "tcp", netip.AddrPortFrom(ip, uint16(port)).String())
	if err == nil {
		c.Close()
		return probeAccepted
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		return probeRefused
	}
	return probeSilent
}

// localInterface reports whether one of the jump host's interfaces holds ip exactly.
func localInterface(ip netip.Addr) (string, bool) {
	ifs, err := net.Interfaces()
	if err != nil {
		return "", false
	}
	for _, i := range ifs {
		addrs, err := i.Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok {
				if p, ok := netip.AddrFromSlice(n.IP); ok && p.Unmap() == ip {
					return i.Name, true
				}
			}
		}
	}
	return "", false
}

// arpComplete reports whether the kernel's ARP table (/proc/net/arp format) has a complete entry
// (flag ATF_COM, 0x2) for ip, and its hardware address.
func arpComplete(path string, ip netip.Addr) (string, bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 4 || fields[0] != ip.String() {
			continue
		}
		flags, err := strconv.ParseUint(strings.TrimPrefix(fields[2], "0x"), 16, 32)
		if err == nil && flags&0x2 != 0 && fields[3] != "00:00:00:00:00:00" {
			return fields[3], true
		}
	}
	return "", false
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range slices.Clone(v) {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}
