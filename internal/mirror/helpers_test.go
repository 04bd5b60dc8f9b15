package mirror

import (
	"context"
	"io"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/regclient/regclient"
	"github.com/regclient/regclient/config"
	"github.com/sirupsen/logrus"

	"github.com/bootstrap-dev/bootstrap/internal/mirror/mirrortest"
)

func TestMain(m *testing.M) {
	// distribution logs every request through logrus' standard logger; keep test output readable.
	logrus.SetOutput(io.Discard)
	os.Exit(m.Run())
}

// counter counts blob bytes a registry serves and the requests it gets.
type counter struct {
	blobBytes atomic.Int64
	blobGets  atomic.Int64
	requests  atomic.Int64
}

func (c *counter) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.requests.Add(1)
		if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/blobs/sha256:") {
			c.blobGets.Add(1)
			w = &countWriter{ResponseWriter: w, n: &c.blobBytes}
		}
		h.ServeHTTP(w, r)
	})
}

type countWriter struct {
	http.ResponseWriter
	n *atomic.Int64
}

func (w *countWriter) Write(p []byte) (int, error) {
	n, err := w.ResponseWriter.Write(p)
	w.n.Add(int64(n))
	return n, err
}

// testEnv is a source registry (plain HTTP) and a destination registry (TLS + htpasswd, like Quay).
type testEnv struct {
	src, dst *mirrortest.Registry
	srcCount *counter
	b        *mirrortest.Builder
}

func newEnv(t *testing.T, wrapSrc func(http.Handler) http.Handler) *testEnv {
	return newEnvTB(t, wrapSrc)
}

func newEnvB(b *testing.B) *testEnv { return newEnvTB(b, nil) }

func newEnvTB(t testing.TB, wrapSrc func(http.Handler) http.Handler) *testEnv {
	t.Helper()
	return newEnvWrapped(t, wrapSrc, nil)
}

// newEnvWrapped is newEnv with the destination's handler wrapped too (when wrapDst is set).
func newEnvWrapped(t testing.TB, wrapSrc, wrapDst func(http.Handler) http.Handler) *testEnv {
	t.Helper()
	c := &counter{}
	wrap := c.wrap
	if wrapSrc != nil {
		wrap = func(h http.Handler) http.Handler { return c.wrap(wrapSrc(h)) }
	}
	src, err := mirrortest.StartRegistry(mirrortest.RegistryOptions{Dir: t.TempDir(), Wrap: wrap})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(src.Close)
	dst, err := mirrortest.StartRegistry(mirrortest.RegistryOptions{Dir: t.TempDir(), TLS: true, User: "robot", Password: "s3cret", Wrap: wrapDst})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(dst.Close)
	rc := regclient.New(regclient.WithConfigHost(config.Host{Name: src.Host, TLS: config.TLSDisabled}))
	return &testEnv{src: src, dst: dst, srcCount: c, b: mirrortest.NewBuilder(rc, 1)}
}

// opts returns copy options for the env's destination, trusting its CA with its auth file.
func (e *testEnv) opts() Options {
	o := DefaultOptions(Dest{Host: e.dst.Host, CAFile: e.dst.CAFile, AuthFile: e.dst.AuthFile})
	o.Source = Endpoint{Host: e.src.Host, Insecure: true}
	o.Parallel = 4
	o.RetryBase = 10_000_000 // 10ms: keep failing tests short
	o.RetryMax = 50_000_000
	return o
}

// dstClient reads the destination with its CA and credentials.
func (e *testEnv) dstClient(t *testing.T) *regclient.RegClient {
	t.Helper()
	rc, err := newClient(e.opts())
	if err != nil {
		t.Fatal(err)
	}
	return rc
}

func ctx(t *testing.T) context.Context { return t.Context() }

// statusHook calls onStatus once, with the status, before the status is written.
type statusHook struct {
	http.ResponseWriter
	onStatus func(code int)
	once     bool
}

func (w *statusHook) WriteHeader(code int) {
	if !w.once {
		w.once = true
		w.onStatus(code)
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusHook) Write(b []byte) (int, error) {
	if !w.once {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}
