package preflight

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"net"
	"net/netip"
	"time"

	"golang.org/x/net/icmp"
	"golang.org/x/net/ipv4"
	"golang.org/x/net/ipv6"
)

// pingResult is the outcome of an ICMP echo probe.
type pingResult int

const (
	pingUnavailable pingResult = iota // no ICMP socket: needs CAP_NET_RAW or net.ipv4.ping_group_range
	pingSilent                        // no echo reply within the timeout
	pingAnswered                      // ip answered an echo request
)

// ping sends up to two ICMP echo requests to ip and waits up to timeout for a reply from it.
// It uses a raw socket when privileged, else an unprivileged ping socket; when neither can be
// opened it reports pingUnavailable rather than guess.
func ping(ctx context.Context, ip netip.Addr, timeout time.Duration) pingResult {
	proto, echo, reply := 1, icmp.Type(ipv4.ICMPTypeEcho), icmp.Type(ipv4.ICMPTypeEchoReply)
	rawNet, dgramNet, laddr := "ip4:icmp", "udp4", "0.0.0.0"
	if ip.Is6() {
		proto, echo, reply = 58, ipv6.ICMPTypeEchoRequest, ipv6.ICMPTypeEchoReply
		rawNet, dgramNet, laddr = "ip6:ipv6-icmp", "udp6", "::"
	}
	c, err := icmp.ListenPacket(rawNet, laddr)
	dgram := false
	if err != nil {
		if c, err = icmp.ListenPacket(dgramNet, laddr); err != nil {
			return pingUnavailable
		}
		dgram = true // the kernel picks the echo ID and filters replies to this socket
	}
	defer c.Close()
	var dst net.Addr = &net.IPAddr{IP: ip.AsSlice()}
	if dgram {
		dst = &net.UDPAddr{IP: ip.AsSlice()}
	}
	var idb [2]byte
	_, _ = rand.Read(idb[:]) // crypto/rand.Read never fails (Go 1.24+)
	id := int(binary.BigEndian.Uint16(idb[:]))
	send := func(seq int) {
		m := icmp.Message{Type: echo, Body: &icmp.Echo{ID: id, Seq: seq, Data: []byte("bootstrap preflight")}}
		if b, err := m.Marshal(nil); err == nil {
			_, _ = c.WriteTo(b, dst)
		}
	}
	deadline := time.Now().Add(timeout)
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl
	}
	send(1)
	resend := time.AfterFunc(timeout/2, func() { send(2) })
	defer resend.Stop()
	_ = c.SetReadDeadline(deadline)
	buf := make([]byte, 1500)
	for {
		n, peer, err := c.ReadFrom(buf)
		if err != nil {
			return pingSilent
		}
		if peerAddr(peer) != ip {
			continue
		}
		m, err := icmp.ParseMessage(proto, buf[:n])
		if err != nil || m.Type != reply {
			continue
		}
		if e, ok := m.Body.(*icmp.Echo); ok && (dgram || e.ID == id) {
			return pingAnswered
		}
	}
}

func peerAddr(a net.Addr) netip.Addr {
	var ip net.IP
	switch v := a.(type) {
	case *net.IPAddr:
		ip = v.IP
	case *net.UDPAddr:
		ip = v.IP
	}
	p, _ := netip.AddrFromSlice(ip)
	return p.Unmap()
}
