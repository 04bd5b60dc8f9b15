package harness

import (
	"errors"
	"io"
	"net"
	"sync"
)

// forwarder accepts TCP connections on one address and relays each, bytes unchanged (TLS passes
// through), to a target. The lab uses it to give a stand-in that can only listen on
// 127.0.0.1:random (an httptest server) the stable address of the lab's plan.
type forwarder struct {
	ln     net.Listener
	target string
	wg     sync.WaitGroup
	mu     sync.Mutex
	conns  map[net.Conn]struct{}
}

func forward(ln net.Listener, target string) *forwarder {
	f := &forwarder{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	f.wg.Add(1)
	go f.serve()
	return f
}

// Addr is the "host:port" the forwarder accepts on.
func (f *forwarder) Addr() string { return f.ln.Addr().String() }

func (f *forwarder) serve() {
	defer f.wg.Done()
	for {
		c, err := f.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		f.wg.Add(1)
		go f.relay(c)
	}
}

func (f *forwarder) relay(c net.Conn) {
	defer f.wg.Done()
	defer c.Close()
	up, err := net.Dial("tcp", f.target)
	if err != nil {
		return
	}
	defer up.Close()
	f.track(c, up)
	defer f.untrack(c, up)
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(up, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, up); done <- struct{}{} }()
	<-done // either side finished: close both
}

func (f *forwarder) track(cs ...net.Conn) {
	f.mu.Lock()
	for _, c := range cs {
		f.conns[c] = struct{}{}
	}
	f.mu.Unlock()
}

func (f *forwarder) untrack(cs ...net.Conn) {
	f.mu.Lock()
	for _, c := range cs {
		delete(f.conns, c)
	}
	f.mu.Unlock()
}

// Close stops accepting, cuts every relayed connection and waits for the relays.
func (f *forwarder) Close() error {
	err := f.ln.Close()
	f.mu.Lock()
	for c := range f.conns {
		c.Close()
	}
	f.mu.Unlock()
	f.wg.Wait()
	return err
}
