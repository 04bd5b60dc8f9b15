package harness

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/site"
	"github.com/bootstrap-dev/bootstrap/internal/stages"
)

// PlaceholderISO serves a small ISO 9660 image, with range support, while the pipeline has no
// iso stage that builds and serves the real one: the profile's iso.baseURL points at it (the
// serve address stays free for the real server, as preflight checks), the boot stage falls back
// to <baseURL>/agent.x86_64.iso and the BMC simulators fetch this. Default leaves it out as soon
// as stages.All() has an iso stage.
type PlaceholderISO struct {
	srv    *http.Server
	addr   string
	ranges atomic.Int64
}

// NeedPlaceholderISO reports whether the pipeline lacks an iso stage.
func NeedPlaceholderISO() bool {
	for _, s := range stages.All() {
		if s.Name() == "iso" {
			return false
		}
	}
	return true
}

// Name implements Component.
func (*PlaceholderISO) Name() string { return "iso-placeholder" }

// Start implements Component.
func (p *PlaceholderISO) Start(_ context.Context, l *Lab) error {
	img := make([]byte, 256<<10)
	copy(img[32768:], "\x01CD001\x01") // primary volume descriptor
	copy(img[32808:], "BOOTSTRAP-LAB-PLACEHOLDER")
	port, err := l.FreePort("iso-placeholder", 1)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(l.IP(1).String(), strconv.Itoa(port)))
	if err != nil {
		return err
	}
	p.addr = ln.Addr().String()
	p.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Range") != "" {
			p.ranges.Add(1)
		}
		http.ServeContent(w, r, "agent.x86_64.iso", time.Unix(0, 0), bytes.NewReader(img))
	})}
	go func() { _ = p.srv.Serve(ln) }()
	return nil
}

// Configure implements Component.
func (p *PlaceholderISO) Configure(s *site.Site, _ *Lab) error {
	s.ISO.BaseURL = "http://" + p.addr
	return nil
}

// Stop implements Component.
func (p *PlaceholderISO) Stop(ctx context.Context) error { return p.srv.Shutdown(ctx) }

// RangeRequests is how many range requests the BMCs made.
func (p *PlaceholderISO) RangeRequests() int64 { return p.ranges.Load() }

// Describe implements Describer.
func (p *PlaceholderISO) Describe() string {
	return fmt.Sprintf("iso       http://%s/agent.x86_64.iso placeholder (no iso stage in this build)", p.addr)
}
