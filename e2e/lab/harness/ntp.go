package harness

import (
	"context"
	"fmt"
	"time"

	"github.com/bootstrap-dev/bootstrap/e2e/lab/ntpd"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// NTP is the site's time source. Offset shifts the clock it serves (a demo of the clock-skew
// check: `up --ntp-offset 5m`).
type NTP struct {
	Offset time.Duration
	srv    *ntpd.Server
}

// Name implements Component.
func (*NTP) Name() string { return "ntp" }

// Start implements Component.
func (n *NTP) Start(_ context.Context, l *Lab) error {
	srv, err := startOnPort(l, "ntp", 123, func(addr string) (*ntpd.Server, error) { return ntpd.Start(addr, n.Offset) })
	if err != nil {
		return err
	}
	n.srv = srv
	return nil
}

// Configure implements Component.
func (n *NTP) Configure(s *site.Site, _ *Lab) error {
	s.Cluster.NTPSources = append(s.Cluster.NTPSources, n.srv.Addr())
	return nil
}

// Stop implements Component.
func (n *NTP) Stop(context.Context) error { return n.srv.Close() }

// Describe implements Describer.
func (n *NTP) Describe() string {
	return fmt.Sprintf("ntp  %s (udp) serves the local clock %+v", n.srv.Addr(), n.Offset)
}
