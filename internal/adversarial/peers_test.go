package adversarial

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/bmc"
	"github.com/bootstrap-dev/bootstrap/internal/mirror"
	"github.com/bootstrap-dev/bootstrap/internal/peerbody"
)

// allocated runs f and returns the bytes it allocated (all goroutines; the test runs alone).
func allocated(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// TestRedfishHugeName: a BMC whose System answers a 50 MB Name is refused after 64 KiB of it,
// with the limit and the field named, in bounded time and memory (before the cap the raw client
// read 8 MiB and failed to decode it; gofish would have read all 50 MB).
func TestRedfishHugeName(t *testing.T) {
	const huge = 50 << 20
	var wrote int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch strings.TrimSuffix(r.URL.Path, "/") {
		case "/redfish/v1":
			fmt.Fprint(w, `{"Systems":{"@odata.id":"/redfish/v1/Systems"},"Managers":{"@odata.id":"/redfish/v1/Managers"}}`)
		case "/redfish/v1/Systems":
			fmt.Fprint(w, `{"Members":[{"@odata.id":"/redfish/v1/Systems/1"}]}`)
		case "/redfish/v1/Systems/1":
			fmt.Fprint(w, `{"Id":"1","Name":"`)
			chunk := []byte(strings.Repeat("A", 64<<10))
			for n := 0; n < huge; n += len(chunk) {
				if _, err := w.Write(chunk); err != nil {
					return // the client hung up: what we want
				}
				wrote += int64(len(chunk))
			}
			fmt.Fprint(w, `"}`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	target := bmc.Target{Node: "n1", Address: srv.URL, Username: "root", Insecure: true,
		Password: func() (string, error) { return "calvin", nil }}
	var err error
	start := time.Now()
	alloc := allocated(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		var c *bmc.Client
		c, err = bmc.Connect(ctx, target, bmc.WithRetry(1, time.Millisecond))
		if err == nil {
			_, err = c.Inspect(ctx)
			c.Close(ctx)
		}
	})
	var le *peerbody.LimitError
	if !errors.As(err, &le) || !strings.Contains(err.Error(), `after "Name"`) || !strings.Contains(err.Error(), "65536 bytes") {
		t.Fatalf("50 MB Name: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("refused after %v", d)
	}
	if alloc > 16<<20 {
		t.Errorf("%d MiB allocated for a refusal after 64 KiB", alloc>>20)
	}
	t.Logf("refused after %v, %d KiB allocated: %v", time.Since(start), alloc>>10, err)
}

// TestRegistryHugeErrorBody: a registry answering a manifest read with an 8 MiB error page that
// echoes the request's Authorization header again and again (so across the clip boundary) yields an error of about
// 2 KiB, which names the cut and holds no form of the password.
func TestRegistryHugeErrorBody(t *testing.T) {
	const user, pass = "mirror", "Reg1stry-Canary-pw"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v2/" {
			w.WriteHeader(http.StatusOK)
			return
		}
		if _, _, ok := r.BasicAuth(); !ok {
			w.Header().Set("WWW-Authenticate", `Basic realm="r"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if r.Method == http.MethodHead { // the manifest is there; reading it fails
			w.Header().Set("Content-Type", "application/vnd.oci.image.manifest.v1+json")
			w.Header().Set("Docker-Content-Digest", "sha256:"+strings.Repeat("a", 64))
			w.Header().Set("Content-Length", "100")
			return
		}
		w.WriteHeader(http.StatusBadRequest)
		// the request echoed back to back, so that the 2 KiB cut falls inside a copy whatever the
		// prefix: a cut before redaction would show its start
		fmt.Fprint(w, strings.Repeat(" "+r.Header.Get("Authorization"), 100))
		fmt.Fprint(w, strings.Repeat("page ", 8<<20/5))
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	auth := filepath.Join(t.TempDir(), "auth.json")
	b, _ := json.Marshal(map[string]any{"auths": map[string]any{host: map[string]string{
		"auth": base64.StdEncoding.EncodeToString([]byte(user + ":" + pass))}}})
	if err := os.WriteFile(auth, b, 0o600); err != nil {
		t.Fatal(err)
	}
	dst := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v2/" {
			http.NotFound(w, r)
		}
	}))
	defer dst.Close()
	dhost := strings.TrimPrefix(dst.URL, "http://")
	o := mirror.DefaultOptions(mirror.Dest{Host: dhost, Insecure: true})
	o.Source = mirror.Endpoint{Host: host, Insecure: true, AuthFile: auth}
	o.Retries, o.Signatures = 0, false
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := mirror.Copy(ctx, []mirror.Image{{Source: host + "/app:1", Dest: dhost + "/app:1"}}, o)
	if err == nil {
		t.Fatal("copy from a registry that refuses everything succeeded")
	}
	msg := err.Error()
	if len(msg) > 8<<10 || !strings.Contains(msg, "cut at 2048") {
		t.Fatalf("error of %d bytes: %.300s", len(msg), msg)
	}
	for name, form := range encodings(pass) {
		if name == "base64 basic" {
			form = base64.StdEncoding.EncodeToString([]byte(user + ":" + pass))
		}
		for n := 6; n <= len(form); n++ {
			if strings.Contains(msg, form[:n]) {
				t.Fatalf("%s: the error shows %q", name, form[:n])
			}
		}
	}
	t.Logf("%d bytes: %.200s…", len(msg), msg)
}
