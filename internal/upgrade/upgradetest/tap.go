package upgradetest

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"

	"k8s.io/client-go/rest"
)

// Tap is a loopback front of the kube-apiserver (plain HTTP, no credentials: it forwards each
// request with the test's) that counts the writes as they reach the API server: every write by
// method and path, and those of ClusterVersion spec.desiredUpdate per version. A write of the same value is counted too, which the API
// server itself would not show (a no-op patch changes neither generation nor resourceVersion).
type Tap struct {
	URL string
	// OnDesired, when set, is called after a desiredUpdate write succeeded at the API server and
	// before its response goes back, with the version and that version's count: a test kills
	// the client there, so the write is in the cluster and the client never learns it.
	OnDesired func(version string, n int)
	// OnWrite, when set, is called the same way for every write that succeeded (POST, PUT, PATCH,
	// DELETE), with "METHOD path" and how many such writes reached the API server.
	OnWrite func(write string, n int)

	mu     sync.Mutex
	writes map[string]int
	all    map[string]int      // "METHOD path" -> writes
	rvs    map[string][]string // "METHOD path" -> the resourceVersion each write's response carried
}

type tapKey struct{}

// NewTap starts a Tap in front of the API server cfg names, until the test ends.
func NewTap(t testing.TB, cfg *rest.Config) *Tap {
	t.Helper()
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	target, err := url.Parse(cfg.Host)
	if err != nil {
		t.Fatal(err)
	}
	tp := &Tap{writes: map[string]int{}, all: map[string]int{}, rvs: map[string][]string{}}
	proxy := &httputil.ReverseProxy{
		Rewrite:       func(pr *httputil.ProxyRequest) { pr.SetURL(target) },
		Transport:     rt,
		FlushInterval: -1,
		ModifyResponse: func(resp *http.Response) error {
			if m := resp.Request.Method; m != http.MethodGet && m != http.MethodHead && resp.StatusCode < 300 {
				w := m + " " + resp.Request.URL.Path
				rv := responseVersion(resp)
				tp.mu.Lock()
				tp.rvs[w] = append(tp.rvs[w], rv)
				tp.all[w]++
				n := tp.all[w]
				tp.mu.Unlock()
				if tp.OnWrite != nil {
					tp.OnWrite(w, n)
				}
			}
			v, _ := resp.Request.Context().Value(tapKey{}).(string)
			if v == "" || resp.StatusCode >= 300 {
				return nil
			}
			tp.mu.Lock()
			tp.writes[v]++
			n := tp.writes[v]
			tp.mu.Unlock()
			if tp.OnDesired != nil {
				tp.OnDesired(v, n)
			}
			return nil
		},
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v := desiredWrite(r); v != "" {
			r = r.WithContext(context.WithValue(r.Context(), tapKey{}, v))
		}
		proxy.ServeHTTP(w, r)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	tp.URL = "http://" + ln.Addr().String()
	return tp
}

// desiredWrite reads (and puts back) a write's body to the ClusterVersion and returns the
// desiredUpdate version it sets, or "".
func desiredWrite(r *http.Request) string {
	if r.Method == http.MethodGet || !strings.HasPrefix(r.URL.Path, "/apis/config.openshift.io/v1/clusterversions/") ||
		strings.HasSuffix(r.URL.Path, "/status") || r.Body == nil {
		return ""
	}
	b, err := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(b))
	if err != nil {
		return ""
	}
	var body struct {
		Spec struct {
			DesiredUpdate struct{ Version string } `json:"desiredUpdate"`
		} `json:"spec"`
	}
	_ = json.Unmarshal(b, &body)
	return body.Spec.DesiredUpdate.Version
}

// Writes is how many desiredUpdate writes for version reached the API server.
func (tp *Tap) Writes(version string) int {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	return tp.writes[version]
}

// Count is how many writes "METHOD path" (e.g. "PATCH /api/v1/nodes/w0") reached the API server.
func (tp *Tap) Count(write string) int {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	return tp.all[write]
}

// Versions are the resourceVersions the API server answered the writes "METHOD path" with, in
// order. A write that changed the object gets a new one; a server-side apply or merge patch that
// left it as it was answers with the one it had: the same value twice in a row is a repeated
// write that changed nothing.
func (tp *Tap) Versions(write string) []string {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	return append([]string(nil), tp.rvs[write]...)
}

// responseVersion reads (and puts back) a write response's metadata.resourceVersion ("" when it
// has none, as a DELETE's status answer may not).
func responseVersion(resp *http.Response) string {
	if resp.Body == nil {
		return ""
	}
	b, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	if err != nil {
		return ""
	}
	data := b
	if resp.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return ""
		}
		if data, err = io.ReadAll(zr); err != nil {
			return ""
		}
	}
	var obj struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	_ = json.Unmarshal(data, &obj)
	return obj.Metadata.ResourceVersion
}

// Kubeconfig is a kubeconfig naming the tap.
func (tp *Tap) Kubeconfig() []byte {
	return []byte(`apiVersion: v1
kind: Config
clusters: [{name: tap, cluster: {server: "` + tp.URL + `"}}]
users: [{name: tap, user: {}}]
contexts: [{name: tap, context: {cluster: tap, user: tap}}]
current-context: tap
`)
}
