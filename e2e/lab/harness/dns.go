package harness

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"

	"github.com/bootstrap-dev/bootstrap/e2e/lab/dnsd"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// DNS is the site's DNS server: it publishes api, api-int, *.apps and every node's name, as the
// site's DNS team would, and the profile's cluster.dnsServers points at it.
type DNS struct {
	srv *dnsd.Server
}

// Name implements Component.
func (*DNS) Name() string { return "dns" }

// Start implements Component: it listens on .53 of the lab net, on the port it had last time
// when free.
func (d *DNS) Start(_ context.Context, l *Lab) error {
	srv, err := startOnPort(l, "dns", 53, func(addr string) (*dnsd.Server, error) { return dnsd.Start(addr, nil) })
	if err != nil {
		return err
	}
	d.srv = srv
	return nil
}

// Configure implements Component.
func (d *DNS) Configure(s *site.Site, _ *Lab) error {
	s.Cluster.DNSServers = append(s.Cluster.DNSServers, d.srv.Addr())
	return nil
}

// Finalize implements Finalizer: the zone holds the names of the finished profile.
func (d *DNS) Finalize(s *site.Site, _ *Lab) error {
	d.srv.Set(ZoneFor(s))
	return nil
}

// Stop implements Component.
func (d *DNS) Stop(ctx context.Context) error { return d.srv.Close(ctx) }

// Describe implements Describer.
func (d *DNS) Describe() string {
	return fmt.Sprintf("dns  %s (udp+tcp) answers api, api-int, *.apps and node names", d.srv.Addr())
}

// ZoneFor returns the records a correct site DNS holds for s.
func ZoneFor(s *site.Site) dnsd.Zone {
	zone := s.Cluster.Name + "." + s.Cluster.BaseDomain
	z := dnsd.Zone{
		"api." + zone:     parse(s.Cluster.APIVIPs),
		"api-int." + zone: parse(s.Cluster.APIVIPs),
		"*.apps." + zone:  parse(s.Cluster.IngressVIPs),
	}
	for _, n := range s.Nodes {
		name := n.Name
		if !strings.Contains(name, ".") {
			name += "." + zone
		}
		var addrs []string
		ifaces, _ := n.NetworkConfig["interfaces"].([]any)
		for _, i := range ifaces {
			im, _ := i.(map[string]any)
			v4, _ := im["ipv4"].(map[string]any)
			as, _ := v4["address"].([]any)
			for _, a := range as {
				if ip, ok := a.(map[string]any)["ip"].(string); ok {
					addrs = append(addrs, ip)
				}
			}
		}
		if len(addrs) > 0 {
			z[name] = parse(addrs)
		}
	}
	return z
}

func parse(ss []string) []netip.Addr {
	var out []netip.Addr
	for _, s := range ss {
		if a, err := netip.ParseAddr(s); err == nil {
			out = append(out, a)
		}
	}
	return out
}

// startOnPort starts a server on lab host .host, on the port remembered under key when it is
// still free, else on a new one, and remembers the port.
func startOnPort[T interface{ Addr() string }](l *Lab, key string, host byte, start func(addr string) (T, error)) (T, error) {
	ip := l.IP(host).String()
	if p := l.Port(key); p > 0 {
		if srv, err := start(net.JoinHostPort(ip, strconv.Itoa(p))); err == nil {
			return srv, nil
		}
	}
	srv, err := start(net.JoinHostPort(ip, "0"))
	if err != nil {
		return srv, err
	}
	_, port, _ := net.SplitHostPort(srv.Addr())
	p, _ := strconv.Atoi(port)
	l.RememberPort(key, p)
	return srv, nil
}
