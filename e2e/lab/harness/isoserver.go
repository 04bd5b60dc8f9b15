package harness

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/agentiso"
	"github.com/bootstrap-dev/bootstrap/internal/site"
	"github.com/bootstrap-dev/bootstrap/internal/stages"
)

// ISOServer serves the agent ISO the iso stage built (<lab>/.bootstrap/installer/agent.*.iso)
// with the ISO stage's own handler (agentiso: HEAD, ranges, ETags), as `bootstrap serve` would
// beside a run whose boot stage does not start the server itself. It picks up a rebuilt ISO on
// the next request and answers 404 until the first one exists. The profile's iso.baseURL points
// at it; iso.serveAddress stays free for bootstrap's own server (preflight checks it is).
type ISOServer struct {
	srv    *http.Server
	addr   string
	work   string
	mu     sync.Mutex
	key    string // path, size and mtime of the ISO served
	h      http.Handler
	prep   *agentiso.Prepared
	ranges atomic.Int64
}

// NeedISOServer reports whether the pipeline's boot stage leaves serving the ISO to someone
// else (stages.Boot.Serve is nil).
func NeedISOServer() bool {
	for _, s := range stages.All() {
		if b, ok := s.(stages.Boot); ok {
			return b.Serve == nil
		}
	}
	return true
}

// Name implements Component.
func (*ISOServer) Name() string { return "iso" }

// Start implements Component.
func (s *ISOServer) Start(_ context.Context, l *Lab) error {
	s.work = filepath.Join(l.Dir, ".bootstrap")
	port, err := l.FreePort("iso-lab", 1)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(l.IP(1).String(), strconv.Itoa(port)))
	if err != nil {
		return err
	}
	s.addr = ln.Addr().String()
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return nil
}

func (s *ISOServer) serve(w http.ResponseWriter, r *http.Request) {
	h, err := s.handler()
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	if r.Header.Get("Range") != "" {
		s.ranges.Add(1)
	}
	h.ServeHTTP(w, r)
}

// handler returns the handler for the current ISO, preparing it again when the file changed.
func (s *ISOServer) handler() (http.Handler, error) {
	matches, _ := filepath.Glob(filepath.Join(s.work, agentiso.InstallerDir, "agent.*.iso"))
	if len(matches) != 1 {
		return nil, fmt.Errorf("no agent ISO in %s yet: the iso stage builds it", filepath.Join(s.work, agentiso.InstallerDir))
	}
	st, err := os.Stat(matches[0])
	if err != nil {
		return nil, err
	}
	key := fmt.Sprintf("%s %d %d", matches[0], st.Size(), st.ModTime().UnixNano())
	s.mu.Lock()
	defer s.mu.Unlock()
	if key == s.key {
		return s.h, nil
	}
	p, err := agentiso.Prepare(agentiso.PrepareOptions{BaseISO: matches[0]})
	if err != nil {
		return nil, err
	}
	h, err := agentiso.NewHandler(agentiso.HandlerOptions{Images: p.Images()})
	if err != nil {
		p.Close()
		return nil, err
	}
	if s.prep != nil {
		s.prep.Close()
	}
	s.key, s.h, s.prep = key, h, p
	return h, nil
}

// Configure implements Component.
func (s *ISOServer) Configure(st *site.Site, _ *Lab) error {
	st.ISO.BaseURL = "http://" + s.addr
	return nil
}

// Stop implements Component.
func (s *ISOServer) Stop(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	s.mu.Lock()
	if s.prep != nil {
		s.prep.Close()
	}
	s.mu.Unlock()
	return err
}

// RangeRequests is how many range requests the BMCs made.
func (s *ISOServer) RangeRequests() int64 { return s.ranges.Load() }

// Describe implements Describer.
func (s *ISOServer) Describe() string {
	return fmt.Sprintf("iso       http://%s serves the agent ISO the iso stage builds (iso.baseURL)", s.addr)
}
