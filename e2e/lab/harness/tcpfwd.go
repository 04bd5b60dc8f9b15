package harness

import (
	"context"
	"io"
	"net"
	"sync"
)

// forwarder relays TCP connections from a lab address to a server that can only listen on
// 127.0.0.1 (the Redfish simulators): TLS passes through untouched, so the client verifies the
// server's own certificate.
type forwarder struct {
	ln     net.Listener
	target string
	wg     sync.WaitGroup
	mu     sync.Mutex
	conns  map[net.Conn]struct{}
}

func startForwarder(addr, target string) (*forwarder, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	f := &forwarder{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	f.wg.Add(1)
	go f.serve()
	return f, nil
}

// Addr is the listen address.
func (f *forwarder) Addr() string { return f.ln.Addr().String() }

func (f *forwarder) serve() {
	defer f.wg.Done()
	for {
		c, err := f.ln.Accept()
		if err != nil {
			return
		}
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			f.relay(c)
		}()
	}
}

func (f *forwarder) relay(c net.Conn) {
	defer c.Close()
	up, err := net.Dial("tcp", f.target)
	if err != nil {
		return
	}
	defer up.Close()
	f.track(c, up, true)
	defer f.track(c, up, false)
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(up, c); closeWrite(up); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, up); closeWrite(c); done <- struct{}{} }()
	<-done
	<-done
}

func closeWrite(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
}

func (f *forwarder) track(a, b net.Conn, add bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if add {
		f.conns[a], f.conns[b] = struct{}{}, struct{}{}
	} else {
		delete(f.conns, a)
		delete(f.conns, b)
	}
}

// Close stops listening and cuts open connections.
func (f *forwarder) Close(context.Context) error {
	err := f.ln.Close()
	f.mu.Lock()
	for c := range f.conns {
		c.Close()
	}
	f.mu.Unlock()
	f.wg.Wait()
	return err
}
