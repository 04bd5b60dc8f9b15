// Package dnsd is a small authoritative DNS server for the lab and tests: it answers A and AAAA
// questions from a zone map on a loopback address, over UDP and TCP, including wildcard names
// ("*.apps.lab.example.test"). It is a stand-in for the site's DNS, not a resolver: names outside
// the map get NXDOMAIN.
package dnsd

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"

	"github.com/miekg/dns"
)

// Zone maps names (with or without the trailing dot; "*." as the first label for a wildcard)
// to the addresses they resolve to.
type Zone map[string][]netip.Addr

// Server answers from a Zone. Start it with Start; stop it with Close.
type Server struct {
	mu   sync.RWMutex
	zone map[string][]netip.Addr // canonical FQDN, lower case
	udp  *dns.Server
	tcp  *dns.Server
	addr string
}

// Start listens on addr ("127.0.0.1:0" picks a free port) for UDP and TCP on the same port and
// serves zone until Close.
func Start(addr string, zone Zone) (*Server, error) {
	s := &Server{}
	s.Set(zone)
	pc, l, err := listenBoth(addr)
	if err != nil {
		return nil, err
	}
	s.addr = pc.LocalAddr().String()
	started := make(chan struct{}, 2)
	notify := func() { started <- struct{}{} }
	s.udp = &dns.Server{PacketConn: pc, Handler: s, NotifyStartedFunc: notify}
	s.tcp = &dns.Server{Listener: l, Handler: s, NotifyStartedFunc: notify}
	go s.udp.ActivateAndServe() //nolint:errcheck // returns on Shutdown
	go s.tcp.ActivateAndServe() //nolint:errcheck // returns on Shutdown
	<-started
	<-started
	return s, nil
}

// listenBoth opens UDP and TCP on one port. With port 0 the UDP port the kernel picks may be
// taken for TCP; a few attempts find one free for both.
func listenBoth(addr string) (net.PacketConn, net.Listener, error) {
	_, port, _ := net.SplitHostPort(addr)
	var err error
	for range 5 {
		var pc net.PacketConn
		pc, err = net.ListenPacket("udp", addr)
		if err != nil {
			return nil, nil, fmt.Errorf("dnsd: listen udp %s: %w", addr, err)
		}
		var l net.Listener
		l, err = net.Listen("tcp", pc.LocalAddr().String())
		if err == nil {
			return pc, l, nil
		}
		pc.Close()
		err = fmt.Errorf("dnsd: listen tcp %s: %w", pc.LocalAddr(), err)
		if port != "0" {
			break
		}
	}
	return nil, nil, err
}

// Addr is the "host:port" the server answers on (UDP and TCP).
func (s *Server) Addr() string { return s.addr }

// Set replaces the zone; tests use it to break a record.
func (s *Server) Set(zone Zone) {
	z := make(map[string][]netip.Addr, len(zone))
	for name, addrs := range zone {
		z[strings.ToLower(dns.Fqdn(name))] = append([]netip.Addr(nil), addrs...)
	}
	s.mu.Lock()
	s.zone = z
	s.mu.Unlock()
}

// Close stops both listeners.
func (s *Server) Close(ctx context.Context) error {
	err1 := s.udp.ShutdownContext(ctx)
	err2 := s.tcp.ShutdownContext(ctx)
	if err1 != nil {
		return err1
	}
	return err2
}

// lookup finds name, then the nearest wildcard above it (RFC 4592: "*.apps.x" also covers
// "a.b.apps.x").
func (s *Server) lookup(name string) ([]netip.Addr, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	name = strings.ToLower(name)
	if a, ok := s.zone[name]; ok {
		return a, true
	}
	for rest := name; ; {
		i := strings.IndexByte(rest, '.')
		if i < 0 || i == len(rest)-1 {
			return nil, false
		}
		rest = rest[i+1:]
		if a, ok := s.zone["*."+rest]; ok {
			return a, true
		}
	}
}

// ServeDNS implements dns.Handler.
func (s *Server) ServeDNS(w dns.ResponseWriter, req *dns.Msg) {
	m := new(dns.Msg)
	m.SetReply(req)
	m.Authoritative = true
	if len(req.Question) != 1 {
		m.Rcode = dns.RcodeFormatError
		_ = w.WriteMsg(m)
		return
	}
	q := req.Question[0]
	addrs, ok := s.lookup(q.Name)
	if !ok {
		m.Rcode = dns.RcodeNameError
		_ = w.WriteMsg(m)
		return
	}
	hdr := dns.RR_Header{Name: q.Name, Class: dns.ClassINET, Ttl: 30}
	for _, a := range addrs {
		switch {
		case q.Qtype == dns.TypeA && a.Is4():
			h := hdr
			h.Rrtype = dns.TypeA
			m.Answer = append(m.Answer, &dns.A{Hdr: h, A: a.AsSlice()})
		case q.Qtype == dns.TypeAAAA && a.Is6():
			h := hdr
			h.Rrtype = dns.TypeAAAA
			m.Answer = append(m.Answer, &dns.AAAA{Hdr: h, AAAA: a.AsSlice()})
		}
	}
	_ = w.WriteMsg(m)
}
