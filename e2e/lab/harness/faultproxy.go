package harness

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
)

// FaultProxy is a TLS reverse proxy in front of a registry. Tests make requests for one
// repository fail (a registry answering 500 for one image) and count what passed through.
type FaultProxy struct {
	srv      *http.Server
	addr     string
	mu       sync.Mutex
	faults   map[string]int // path substring -> status
	requests atomic.Int64
	failed   atomic.Int64
	writes   atomic.Int64
}

// StartFaultProxy serves HTTPS on addr with cert and forwards to backend (an https:// URL whose
// certificate ca signs).
func StartFaultProxy(addr, backend string, cert tls.Certificate, ca []byte) (*FaultProxy, error) {
	u, err := url.Parse(backend)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, errors.New("fault proxy: no certificate in CA PEM")
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(u)
			r.Out.Host = r.In.Host // the registry's relative URLs keep clients on the front address
		},
		Transport: &http.Transport{Proxy: nil, TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
			MaxIdleConnsPerHost: 32},
		ErrorLog: log.New(io.Discard, "", 0),
	}
	p := &FaultProxy{faults: map[string]int{}}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	p.addr = ln.Addr().String()
	p.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.requests.Add(1)
		switch r.Method {
		case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
			p.writes.Add(1)
		}
		if st := p.fault(r.URL.Path); st != 0 {
			p.failed.Add(1)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(st)
			_, _ = io.WriteString(w, `{"errors":[{"code":"UNKNOWN","message":"injected by the lab's fault proxy"}]}`)
			return
		}
		rp.ServeHTTP(w, r)
	}), TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
		ErrorLog: log.New(io.Discard, "", 0)}
	go func() { _ = p.srv.ServeTLS(ln, "", "") }()
	return p, nil
}

// Addr is the listen address (host:port).
func (p *FaultProxy) Addr() string { return p.addr }

// Fail makes every request whose path contains substr (a repository name) answer status; 0
// removes the fault.
func (p *FaultProxy) Fail(substr string, status int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if status == 0 {
		delete(p.faults, substr)
		return
	}
	p.faults[substr] = status
}

// Requests is how many requests reached the proxy; Failed how many it failed on purpose.
func (p *FaultProxy) Requests() (total, failed int64) { return p.requests.Load(), p.failed.Load() }

// Writes is how many POST, PUT, PATCH and DELETE requests reached the proxy (uploads, pushes).
func (p *FaultProxy) Writes() int64 { return p.writes.Load() }

func (p *FaultProxy) fault(path string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	for s, st := range p.faults {
		if strings.Contains(path, s) {
			return st
		}
	}
	return 0
}

// Close stops the proxy.
func (p *FaultProxy) Close(ctx context.Context) error {
	if p == nil {
		return nil
	}
	return p.srv.Shutdown(ctx)
}
