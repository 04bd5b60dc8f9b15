package harness

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"

	"github.com/bootstrap-dev/bootstrap/internal/bmc/bmctest"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// BMC starts one simulated iDRAC9 (internal/bmc/bmctest) per node of the profile: the node's
// user and password, its interface MACs, and a TLS certificate from the lab CA, so the profile
// verifies BMC TLS against certs/lab-ca.pem as a site does against its own PKI.
//
// Each node's BMC is at .100+i of the lab net, on a port the lab dir remembers: bmctest serves
// through httptest on 127.0.0.1:random, so a forwarder relays the stable address to it (TLS
// passes through; the certificate names both addresses).
type BMC struct {
	// Firmware of every simulator; empty: bmctest's default (a current iDRAC9).
	Firmware string

	sims  map[string]*bmctest.BMC // by node name
	fwds  map[string]*forwarder
	order []string
}

// Name implements Component.
func (*BMC) Name() string { return "bmc" }

// Start implements Component: one simulator per node that has a BMC in the profile.
func (b *BMC) Start(_ context.Context, l *Lab) error {
	ips := []netip.Addr{netip.MustParseAddr("127.0.0.1")}
	for i := range l.Site.Nodes {
		ips = append(ips, l.IP(byte(100+i)))
	}
	cert, err := l.CA.Issue(ips, "localhost")
	if err != nil {
		return err
	}
	shared := &bmctest.Cert{TLS: cert, CAPEM: l.CA.PEM()}
	b.sims, b.fwds = map[string]*bmctest.BMC{}, map[string]*forwarder{}
	for i, n := range l.Site.Nodes {
		pw, err := os.ReadFile(filepath.Join(l.Dir, n.BMC.Password.File))
		if err != nil {
			b.closeAll()
			return fmt.Errorf("node %s: BMC password (the files component writes it): %w", n.Name, err)
		}
		macs := make([]string, 0, len(n.Interfaces))
		for _, i := range n.Interfaces {
			macs = append(macs, i.MACAddress)
		}
		sim := bmctest.New(bmctest.Options{Firmware: b.Firmware, Username: n.BMC.Username,
			Password: strings.TrimSpace(string(pw)), MACs: macs, Cert: shared})
		b.sims[n.Name] = sim
		fwd, err := startOnPort(l, "bmc-"+n.Name, byte(100+i), func(addr string) (*forwarder, error) {
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return nil, err
			}
			return forward(ln, strings.TrimPrefix(sim.URL(), "https://")), nil
		})
		if err != nil {
			b.closeAll()
			return fmt.Errorf("node %s: BMC address: %w", n.Name, err)
		}
		b.fwds[n.Name] = fwd
		b.order = append(b.order, n.Name)
	}
	return nil
}

// Configure implements Component: each node's bmc.address is its simulator, trusted through
// the lab CA.
func (b *BMC) Configure(s *site.Site, _ *Lab) error {
	for i, n := range s.Nodes {
		if fwd, ok := b.fwds[n.Name]; ok {
			s.Nodes[i].BMC.Address = "https://" + fwd.Addr()
			s.Nodes[i].BMC.CAFile = CAFile
		}
	}
	return nil
}

// Stop implements Component.
func (b *BMC) Stop(context.Context) error {
	b.closeAll()
	return nil
}

func (b *BMC) closeAll() {
	for _, f := range b.fwds {
		_ = f.Close()
	}
	for _, sim := range b.sims {
		sim.Close()
	}
	b.sims, b.fwds = nil, nil
}

// Describe implements Describer.
func (b *BMC) Describe() string {
	var parts []string
	for _, name := range b.order {
		if f, ok := b.fwds[name]; ok {
			parts = append(parts, name+" "+f.Addr())
		}
	}
	return "bmc  simulated iDRAC9 (Redfish, TLS from the lab CA): " + strings.Join(parts, ", ")
}

// Sim returns the simulator of a node, for tests that inspect what the pipeline did to it.
func (b *BMC) Sim(node string) *bmctest.BMC { return b.sims[node] }
