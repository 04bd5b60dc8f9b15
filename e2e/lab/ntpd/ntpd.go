// Package ntpd is a minimal SNTP server (RFC 4330) for the lab and tests. It answers every
// client-mode query on a loopback UDP address with the local clock shifted by a configurable
// offset, so a test can make the jump host's clock look skewed, or a configurable leap
// indicator to play an unsynchronised server.
package ntpd

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// ntpEpochOffset is the seconds between 1900-01-01 (NTP era 0) and 1970-01-01.
const ntpEpochOffset = 2208988800

// LeapNotInSync is the leap indicator of a server whose clock is not synchronised.
const LeapNotInSync = 3

// Server answers SNTP queries. Start it with Start; stop it with Close.
type Server struct {
	pc      net.PacketConn
	offset  atomic.Int64 // nanoseconds added to the local clock
	leap    atomic.Int32
	stratum uint8
	wg      sync.WaitGroup
}

// Start listens on addr ("127.0.0.1:0" picks a free port) and answers with the local clock
// shifted by offset.
func Start(addr string, offset time.Duration) (*Server, error) {
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		return nil, fmt.Errorf("ntpd: listen %s: %w", addr, err)
	}
	s := &Server{pc: pc, stratum: 2}
	s.offset.Store(int64(offset))
	s.wg.Add(1)
	go s.serve()
	return s, nil
}

// Addr is the "host:port" the server answers on.
func (s *Server) Addr() string { return s.pc.LocalAddr().String() }

// SetOffset changes the offset of the served clock from the local one.
func (s *Server) SetOffset(d time.Duration) { s.offset.Store(int64(d)) }

// SetLeap sets the leap indicator sent (LeapNotInSync plays an unsynchronised server).
func (s *Server) SetLeap(li int) { s.leap.Store(int32(li)) }

// Close stops the server and waits for its goroutine.
func (s *Server) Close() error {
	err := s.pc.Close()
	s.wg.Wait()
	return err
}

func (s *Server) serve() {
	defer s.wg.Done()
	buf := make([]byte, 512)
	for {
		n, from, err := s.pc.ReadFrom(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		recv := time.Now().Add(time.Duration(s.offset.Load()))
		if n < 48 || buf[0]&0x7 != 3 { // not a client-mode query
			continue
		}
		_, _ = s.pc.WriteTo(s.reply(buf[:48], recv), from)
	}
}

// reply builds the 48-byte server-mode answer to query q.
func (s *Server) reply(q []byte, recv time.Time) []byte {
	r := make([]byte, 48)
	vn := (q[0] >> 3) & 0x7
	r[0] = byte(s.leap.Load())<<6 | vn<<3 | 4 // LI, VN (echo the client's), mode 4 = server
	r[1] = s.stratum
	r[2] = q[2]                                                     // poll
	r[3] = 0xEC                                                     // precision 2^-20 s
	binary.BigEndian.PutUint32(r[4:], 0)                            // root delay
	binary.BigEndian.PutUint32(r[8:], 0x0100)                       // root dispersion ~ 3.9 ms
	copy(r[12:16], []byte{127, 0, 0, 1})                            // reference ID: our "upstream"
	putTime(r[16:], recv.Add(-time.Minute))                         // reference timestamp: last set a minute ago
	copy(r[24:32], q[40:48])                                        // origin = client's transmit timestamp
	putTime(r[32:], recv)                                           // receive
	putTime(r[40:], time.Now().Add(time.Duration(s.offset.Load()))) // transmit
	return r
}

func putTime(b []byte, t time.Time) {
	sec := uint64(t.Unix() + ntpEpochOffset)
	frac := uint64(t.Nanosecond()) << 32 / 1e9
	binary.BigEndian.PutUint64(b, sec<<32|frac)
}
