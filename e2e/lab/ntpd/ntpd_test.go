package ntpd

import (
	"encoding/binary"
	"net"
	"testing"
	"time"
)

// exchange is a hand-written SNTP client (RFC 4330 §5), independent of the server's code.
func exchange(t *testing.T, addr string) (offset time.Duration, reply []byte) {
	t.Helper()
	c, err := net.Dial("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Second))
	q := make([]byte, 48)
	q[0] = 4<<3 | 3 // VN 4, mode 3 (client)
	binary.BigEndian.PutUint64(q[40:], 0xDEADBEEF01234567)
	t1 := time.Now()
	if _, err := c.Write(q); err != nil {
		t.Fatal(err)
	}
	r := make([]byte, 48)
	if _, err := c.Read(r); err != nil {
		t.Fatal(err)
	}
	t4 := time.Now()
	t2, t3 := ntpTime(r[32:]), ntpTime(r[40:])
	return (t2.Sub(t1) + t3.Sub(t4)) / 2, r
}

func ntpTime(b []byte) time.Time {
	v := binary.BigEndian.Uint64(b)
	return time.Unix(int64(v>>32)-ntpEpochOffset, int64((v&0xffffffff)*1e9>>32))
}

func TestServer(t *testing.T) {
	s, err := Start("127.0.0.1:0", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	off, r := exchange(t, s.Addr())
	if off > 50*time.Millisecond || off < -50*time.Millisecond {
		t.Errorf("offset %s, want ~0", off)
	}
	if r[0]&7 != 4 || r[0]>>3&7 != 4 || r[1] != 2 || r[0]>>6 != 0 {
		t.Errorf("header %08b stratum %d: want mode 4, version 4, stratum 2, in sync", r[0], r[1])
	}
	if binary.BigEndian.Uint64(r[24:]) != 0xDEADBEEF01234567 {
		t.Error("origin timestamp must echo the client's transmit timestamp")
	}

	s.SetOffset(-time.Hour)
	s.SetLeap(LeapNotInSync)
	off, r = exchange(t, s.Addr())
	if d := off + time.Hour; d > 50*time.Millisecond || d < -50*time.Millisecond {
		t.Errorf("offset %s, want ~-1h", off)
	}
	if r[0]>>6 != LeapNotInSync {
		t.Errorf("leap %d", r[0]>>6)
	}
}
