package bmctest

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"time"
)

// ISOServer serves a small synthetic ISO 9660 image with range support, like the ISO stage's
// server, and counts the range requests it answers.
type ISOServer struct {
	srv    *httptest.Server
	image  []byte
	ranges atomic.Int64
	down   atomic.Bool

	mu    sync.Mutex
	reads map[string][]time.Time // range reads by path
}

// NewISOServer starts an HTTP server on 127.0.0.1 serving every path as the same image.
func NewISOServer() *ISOServer {
	img := make([]byte, 128<<10)
	copy(img[32768:], "\x01CD001\x01") // primary volume descriptor
	s := &ISOServer{image: img, reads: map[string][]time.Time{}}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.down.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		if r.Header.Get("Range") != "" {
			s.ranges.Add(1)
			s.mu.Lock()
			s.reads[r.URL.Path] = append(s.reads[r.URL.Path], time.Now())
			s.mu.Unlock()
		}
		http.ServeContent(w, r, "agent.x86_64.iso", time.Unix(0, 0), bytes.NewReader(s.image))
	}))
	return s
}

// URL is the server's base URL (http://127.0.0.1:port).
func (s *ISOServer) URL() string { return s.srv.URL }

// RangeRequests is how many range requests were answered.
func (s *ISOServer) RangeRequests() int64 { return s.ranges.Load() }

// ReadsSince counts range reads of path at or after t: the fetch log a boot-evidence check reads.
func (s *ISOServer) ReadsSince(path string, t time.Time) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, at := range s.reads[path] {
		if !at.Before(t) {
			n++
		}
	}
	return n
}

// SetDown makes the server answer 503 to everything (as if the process serving it had died) or
// serve again.
func (s *ISOServer) SetDown(down bool) { s.down.Store(down) }

// Close stops the server.
func (s *ISOServer) Close() { s.srv.Close() }
