package redirect

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// TestCredentialsStayOnOrigin: a peer redirecting to another host (here: the same loopback address
// on another port) or from https to http gets no request with the credentials; a redirect on
// the same origin is followed with them.
func TestCredentialsStayOnOrigin(t *testing.T) {
	var leaked atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" || r.Header.Get("X-Auth-Token") != "" {
			leaked.Add(1)
		}
	}))
	defer other.Close()
	var tlsURL string
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/elsewhere":
			http.Redirect(w, r, other.URL+"/x", http.StatusFound)
		case "/downgrade":
			// the same host and port over http: what a misconfigured BMC does
			http.Redirect(w, r, strings.Replace(tlsURL, "https://", "http://", 1)+"/x", http.StatusFound)
		case "/here":
			http.Redirect(w, r, "/ok", http.StatusFound)
		case "/ok":
			if r.Header.Get("Authorization") == "" {
				w.WriteHeader(http.StatusUnauthorized)
			}
		}
	}))
	defer tlsSrv.Close()
	tlsURL = tlsSrv.URL
	c := Client(tlsSrv.Client())
	for path, refused := range map[string]string{"/elsewhere": "refused", "/downgrade": "downgrades https", "/here": ""} {
		req, _ := http.NewRequest(http.MethodGet, tlsSrv.URL+path, nil)
		req.SetBasicAuth("root", "calvin-calvin")
		req.Header.Set("X-Auth-Token", "session-token")
		resp, err := c.Do(req)
		switch {
		case refused == "" && (err != nil || resp.StatusCode != http.StatusOK):
			t.Errorf("%s: %v %v", path, err, resp)
		case refused != "" && (err == nil || !strings.Contains(err.Error(), refused)):
			t.Errorf("%s: %v, want refused (%s)", path, err, refused)
		}
		if resp != nil {
			resp.Body.Close()
		}
	}
	if leaked.Load() != 0 {
		t.Errorf("credentials reached another origin %d times", leaked.Load())
	}
}
