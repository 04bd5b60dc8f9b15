package mirrortest

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/distribution/distribution/v3/configuration"
	"github.com/distribution/distribution/v3/registry/handlers"
	"golang.org/x/crypto/bcrypt"

	// storage driver and access controller used by the registry configuration below
	_ "github.com/distribution/distribution/v3/registry/auth/htpasswd"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/filesystem"
)

// RegistryOptions configure an in-process registry.
type RegistryOptions struct {
	// Dir holds the storage (filesystem driver) and, with TLS or auth, the CA, htpasswd and auth
	// files. Required.
	Dir string
	// TLS serves HTTPS with a fresh self-signed certificate for 127.0.0.1 (written to CAFile).
	TLS bool
	// User and Password, when set, enable htpasswd basic auth (as Quay's robot accounts do).
	User, Password string
	// Wrap, when set, wraps the registry's handler (a fault injector, a request counter).
	Wrap func(http.Handler) http.Handler
	// SparseIndexes, when set, makes the registry accept indexes whose children are present only
	// for these platforms ("linux/amd64"): distribution's validation.manifests.indexes.platforms:
	// list with that platformlist, as Quay's FEATURE_SPARSE_INDEX. By default every child must be
	// present (distribution's default, Debian's docker-registry).
	SparseIndexes []string
}

// Registry is a running distribution v3 registry on a loopback port.
type Registry struct {
	Host     string // 127.0.0.1:PORT
	Storage  string // filesystem driver root
	CAFile   string // PEM of the server certificate (TLS only)
	AuthFile string // containers auth file with the credentials (auth only)
	// Conns counts the connections clients opened (with TLS, each one a handshake).
	Conns atomic.Int64
	srv   *httptest.Server
}

// StartRegistry starts a registry; Close stops it.
func StartRegistry(o RegistryOptions) (*Registry, error) {
	if o.Dir == "" {
		return nil, fmt.Errorf("registry dir is empty")
	}
	r := &Registry{Storage: filepath.Join(o.Dir, "storage")}
	if err := os.MkdirAll(r.Storage, 0o755); err != nil {
		return nil, err
	}
	cfg := &configuration.Configuration{
		Storage: configuration.Storage{
			"filesystem": configuration.Parameters{"rootdirectory": r.Storage},
			"delete":     configuration.Parameters{"enabled": true},
		},
	}
	if len(o.SparseIndexes) > 0 {
		cfg.Validation.Manifests.Indexes.Platforms = "list"
		for _, p := range o.SparseIndexes {
			goos, arch, ok := strings.Cut(p, "/")
			if !ok {
				return nil, fmt.Errorf("sparse index platform %q: want os/arch", p)
			}
			cfg.Validation.Manifests.Indexes.PlatformList = append(cfg.Validation.Manifests.Indexes.PlatformList,
				configuration.Platform{OS: goos, Architecture: arch})
		}
	}
	cfg.HTTP.Secret = "mirrortest"
	cfg.Log.AccessLog.Disabled = true
	if o.User != "" {
		hash, err := bcrypt.GenerateFromPassword([]byte(o.Password), bcrypt.MinCost)
		if err != nil {
			return nil, err
		}
		htp := filepath.Join(o.Dir, "htpasswd")
		if err := os.WriteFile(htp, []byte(o.User+":"+string(hash)+"\n"), 0o600); err != nil {
			return nil, err
		}
		cfg.Auth = configuration.Auth{"htpasswd": configuration.Parameters{"realm": "mirrortest", "path": htp}}
	}
	var h http.Handler = handlers.NewApp(context.Background(), cfg)
	if o.Wrap != nil {
		h = o.Wrap(h)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			r.Conns.Add(1)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv.Listener = l
	if o.TLS {
		srv.StartTLS()
		r.CAFile = filepath.Join(o.Dir, "ca.pem")
		p := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
		if err := os.WriteFile(r.CAFile, p, 0o644); err != nil {
			srv.Close()
			return nil, err
		}
	} else {
		srv.Start()
	}
	r.srv = srv
	r.Host = l.Addr().String()
	if o.User != "" {
		r.AuthFile = filepath.Join(o.Dir, "auth.json")
		if err := WriteAuthFile(r.AuthFile, r.Host, o.User, o.Password); err != nil {
			srv.Close()
			return nil, err
		}
	}
	return r, nil
}

// Close stops the registry.
func (r *Registry) Close() { r.srv.Close() }

// WriteAuthFile writes a containers auth file with one entry.
func WriteAuthFile(path, host, user, pass string) error {
	f := map[string]any{"auths": map[string]any{
		host: map[string]string{"auth": base64.StdEncoding.EncodeToString([]byte(user + ":" + pass))},
	}}
	b, err := json.Marshal(f)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o600)
}
