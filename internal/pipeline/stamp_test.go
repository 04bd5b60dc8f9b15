package pipeline

import (
	"bytes"
	"testing"
)

// TestStampVersion: the stamp goes first in an object, is replaced rather than doubled, leaves
// other JSON alone, and comparing without stamps makes a pre-version output equal to the same
// output stamped (so upgrading bootstrap mid-install marks nothing stale).
func TestStampVersion(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"url":"u"}`, `{"outputVersion":3,"url":"u"}`},
		{`{}`, `{"outputVersion":3}`},
		{`{"outputVersion":1,"url":"u"}`, `{"outputVersion":3,"url":"u"}`},
		{`{"outputVersion":1}`, `{"outputVersion":3}`},
		{`null`, `null`},
		{`["a"]`, `["a"]`},
	} {
		got := stampVersion([]byte(c.in), 3)
		if string(got) != c.want {
			t.Errorf("stampVersion(%s) = %s, want %s", c.in, got, c.want)
		}
		if c.in[0] == '{' && OutputVersionOf(got) != 3 {
			t.Errorf("OutputVersionOf(%s) = %d", got, OutputVersionOf(got))
		}
	}
	old := []byte(`{"url":"u","n":1}`)
	if !bytes.Equal(unstamped(stampVersion(old, 1)), unstamped(old)) {
		t.Error("a stamped output differs from the same output unstamped")
	}
	if bytes.Equal(unstamped(stampVersion([]byte(`{"url":"v"}`), 1)), unstamped(old)) {
		t.Error("different outputs compare equal")
	}
	if OutputVersionOf([]byte(`{"outputVersion":"x"}`)) != 0 {
		t.Error("an unreadable stamp must match no key")
	}
}
