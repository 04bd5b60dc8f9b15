package agentiso

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestServedHere(t *testing.T) {
	cases := []struct {
		serve, base string
		want        bool
	}{
		{"10.0.0.5:8080", "", true},
		{"10.0.0.5:8080", "http://10.0.0.5:8080", true},
		{"10.0.0.5:8080", "http://10.0.0.5:8080/iso/", true},
		{"0.0.0.0:8080", "http://127.0.0.1:8080", true},
		{"0.0.0.0:8080", "http://localhost:8080", true},
		{"10.0.0.5:8080", "http://10.0.0.9:8080", false},   // the site's web server
		{"10.0.0.5:8080", "http://10.0.0.5:80", false},     // another server on the same host
		{"0.0.0.0:8080", "https://192.0.2.10/isos", false}, // TEST-NET: not this machine
		{"0.0.0.0:8080", "http://192.0.2.10:8080", false},
	}
	for _, c := range cases {
		if got := ServedHere(c.serve, c.base); got != c.want {
			t.Errorf("ServedHere(%q, %q) = %t, want %t", c.serve, c.base, got, c.want)
		}
	}
}

func TestProbeISO(t *testing.T) {
	img := make([]byte, 64<<10)
	copy(img[32768:], "\x01CD001\x01")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/agent.x86_64.iso":
			http.ServeContent(w, r, "agent.x86_64.iso", time.Unix(0, 0), strings.NewReader(string(img)))
		case "/norange.iso":
			_, _ = w.Write(img)
		case "/text.iso":
			http.ServeContent(w, r, "text.iso", time.Unix(0, 0), strings.NewReader(strings.Repeat("x", 40000)))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	for path, want := range map[string]string{"/agent.x86_64.iso": "", "/norange.iso": "ignored the Range header",
		"/text.iso": "not an ISO image", "/missing.iso": "HTTP 404"} {
		err := ProbeISO(context.Background(), srv.URL+path, 2*time.Second)
		if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("%s: %v, want %q", path, err, want)
		}
	}
	if err := ProbeISO(context.Background(), "http://127.0.0.1:1/agent.x86_64.iso", time.Second); err == nil {
		t.Error("a closed port answered")
	}
}
