package harness

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/bmc/bmctest"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// BMCs are the nodes' BMCs: one Redfish simulator per node (the bmc engineer's bmctest), each
// reached at the node's lab BMC address (.100 + index) through a TCP relay, serving the lab CA's
// certificate. A mixed rack: control-plane nodes are iDRAC9s on firmware 5.10 (virtual media
// under the Manager), GPU workers iDRAC9s on 7.00 (under the System), except the last GPU worker,
// a generic Redfish BMC shaped like sushy-tools (it keeps every boot override Continuous, so the
// boot stage arms a persistent override and the install stage takes it off). Each simulator
// reports the node's MACs, fetches inserted media from the ISO server with range requests, and,
// once booted from its ISO, keeps reading it as a live system does.
type BMCs struct {
	// Latency is added to every Redfish call, BootDelay from power action to booted; defaults
	// 5 ms and 1 s (a real iDRAC takes seconds; the lab keeps a run short).
	Latency, BootDelay time.Duration
	// LiveReads is how often a node booted from its ISO reads it again (default 1 s).
	LiveReads time.Duration
	// Profiles overrides a node's simulator profile by name; nil: the mixed rack above.
	Profiles map[string]bmctest.Profile
	// Sims maps node name to its simulator (stats, fault injection); set by Start.
	Sims  map[string]*bmctest.BMC
	fwds  map[string]*forwarder
	order []string
}

// Name implements Component.
func (*BMCs) Name() string { return "bmc" }

// Start implements Component.
func (b *BMCs) Start(ctx context.Context, l *Lab) (err error) {
	defer func() {
		if err != nil {
			_ = b.Stop(context.WithoutCancel(ctx))
		}
	}()
	var hosts []byte
	for i := range l.Site.Nodes {
		hosts = append(hosts, byte(100+i))
	}
	cert, _, _, err := serverCert(l, "", hosts...)
	if err != nil {
		return err
	}
	ca := l.CA.PEM()
	if b.Latency == 0 {
		b.Latency = 5 * time.Millisecond
	}
	if b.BootDelay == 0 {
		b.BootDelay = time.Second
	}
	if b.LiveReads == 0 {
		b.LiveReads = time.Second
	}
	profiles := b.Profiles
	if profiles == nil {
		profiles = map[string]bmctest.Profile{}
		for i := len(l.Site.Nodes) - 1; i >= 0; i-- {
			if l.Site.Nodes[i].GPU {
				profiles[l.Site.Nodes[i].Name] = bmctest.ProfileGeneric
				break
			}
		}
	}
	b.Sims, b.fwds = map[string]*bmctest.BMC{}, map[string]*forwarder{}
	for i, n := range l.Site.Nodes {
		pass, err := secretFile(filepath.Join(l.Dir, n.BMC.Password.File))
		if err != nil {
			return err
		}
		o := bmctest.Options{Firmware: "5.10.50.00", Model: "PowerEdge R660", Username: n.BMC.Username, Password: pass,
			MACs: nodeMACs(n), Latency: b.Latency, BootDelay: b.BootDelay, Cert: &bmctest.Cert{TLS: cert, CAPEM: ca}}
		if n.GPU {
			o.Firmware, o.Model = "7.00.00.00", "PowerEdge XE9680"
		}
		o.LiveReads = b.LiveReads
		// A BMC reads virtual media from its own address, as the ISO server's fetch log shows.
		o.Fetch = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Proxy: nil,
			DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: l.IP(byte(100 + i)).AsSlice()}}).DialContext}}
		if p := profiles[n.Name]; p != "" && p != bmctest.ProfileIDRAC9 {
			o.Profile, o.Firmware, o.Model = p, "", ""
		}
		sim := bmctest.New(o)
		b.Sims[n.Name] = sim
		b.order = append(b.order, n.Name)
		u, err := url.Parse(sim.URL())
		if err != nil {
			return err
		}
		fwd, err := startOnPort(l, "bmc-"+n.Name, byte(100+i), func(addr string) (*forwarder, error) {
			return startForwarder(addr, u.Host)
		})
		if err != nil {
			return err
		}
		b.fwds[n.Name] = fwd
	}
	return nil
}

// nodeMACs are the MACs the node's BMC reports: the boot MAC and every interface's.
func nodeMACs(n site.Node) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range append([]string{n.BootMAC}, macsOf(n.Interfaces)...) {
		m = strings.ToUpper(m)
		if m != "" && !seen[m] {
			seen[m] = true
			out = append(out, m)
		}
	}
	return out
}

func macsOf(ifs []site.Interface) []string {
	var out []string
	for _, i := range ifs {
		out = append(out, i.MACAddress)
	}
	return out
}

// Configure implements Component.
func (b *BMCs) Configure(s *site.Site, _ *Lab) error {
	for i := range s.Nodes {
		n := &s.Nodes[i]
		if f, ok := b.fwds[n.Name]; ok {
			n.BMC.Address = "https://" + f.Addr()
			n.BMC.CAFile = CAFile
		}
	}
	return nil
}

// Stop implements Component.
func (b *BMCs) Stop(ctx context.Context) error {
	var errs []error
	for _, f := range b.fwds {
		if err := f.Close(ctx); err != nil && !errors.Is(err, net.ErrClosed) {
			errs = append(errs, err)
		}
	}
	for _, s := range b.Sims {
		s.Close()
	}
	b.fwds, b.Sims = nil, nil
	return errors.Join(errs...)
}

// Describe implements Describer.
func (b *BMCs) Describe() string {
	var parts []string
	for _, n := range b.order {
		parts = append(parts, n+"="+b.fwds[n].Addr()+"("+string(b.Sims[n].Profile())+")")
	}
	return fmt.Sprintf("bmc       %d Redfish simulators, iDRAC9 and generic (TLS, lab CA): %s", len(b.order), strings.Join(parts, " "))
}
