package harness

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/crypto/bcrypt"

	"github.com/bootstrap-dev/bootstrap/internal/childproc"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// RegistryUser is the lab registry's account (a Quay robot account on site).
const RegistryUser = "bootstrap+robot"

// Registry is the site's mirror registry: Debian's docker-registry (distribution 2.8) with TLS
// from the lab CA and htpasswd basic auth, the stand-in for Quay. It listens on an internal
// address (.62); the profile's registry.host (.60) is a TLS front (FaultProxy) through which tests
// make one repository fail. Storage lives in <lab>/registry and survives restarts.
type Registry struct {
	// Proxy is the front tests inject faults into; set by Start.
	Proxy *FaultProxy
	back  *childproc.Proc
	front string
	dir   string
}

// Name implements Component.
func (*Registry) Name() string { return "registry" }

// Start implements Component.
func (r *Registry) Start(ctx context.Context, l *Lab) error {
	r.dir = filepath.Join(l.Dir, "registry")
	cert, certFile, keyFile, err := serverCert(l, filepath.Join(r.dir, "tls"), 60, 62)
	if err != nil {
		return err
	}
	pass, err := secretFile(filepath.Join(l.Dir, "secrets", "registry.password"))
	if err != nil {
		return err
	}
	htp := filepath.Join(r.dir, "htpasswd")
	hash, err := bcrypt.GenerateFromPassword([]byte(pass), bcrypt.MinCost)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(r.dir, 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(htp, []byte(RegistryUser+":"+string(hash)+"\n"), 0o600); err != nil {
		return err
	}
	port, err := l.FreePort("registry-backend", 62)
	if err != nil {
		return err
	}
	back := net.JoinHostPort(l.IP(62).String(), strconv.Itoa(port))
	if r.back, err = startRegistry(ctx, l, "registry", back, r.dir, certFile, keyFile, htp); err != nil {
		return err
	}
	ca := l.CA.PEM()
	r.Proxy, err = startOnPort(l, "registry", 60, func(addr string) (*FaultProxy, error) {
		return StartFaultProxy(addr, "https://"+back, cert, ca)
	})
	if err != nil {
		_ = r.back.Stop()
		return err
	}
	r.front = r.Proxy.Addr()
	return writeAuthFile(filepath.Join(l.Dir, "secrets", "registry-auth.json"), r.front, RegistryUser, pass)
}

// Configure implements Component.
func (r *Registry) Configure(s *site.Site, _ *Lab) error {
	s.Registry.Host = r.front
	s.Registry.CAFile = CAFile
	s.Registry.AuthFile = "secrets/registry-auth.json"
	return nil
}

// Stop implements Component.
func (r *Registry) Stop(ctx context.Context) error {
	err := r.Proxy.Close(ctx)
	if e := r.back.Stop(); err == nil {
		err = e
	}
	return err
}

// Describe implements Describer.
func (r *Registry) Describe() string {
	return fmt.Sprintf("registry  https://%s docker-registry (TLS, htpasswd user %s), the Quay stand-in", r.front, RegistryUser)
}

// Storage is the registry's storage root (tests read what was pushed).
func (r *Registry) Storage() string { return filepath.Join(r.dir, "storage") }

// startRegistry runs docker-registry on addr with TLS (certFile, keyFile) and, when htpasswd is set, basic
// auth. The config is JSON (a YAML subset), written beside the storage.
func startRegistry(ctx context.Context, l *Lab, name, addr, dir, certFile, keyFile, htpasswd string) (*childproc.Proc, error) {
	cfg := map[string]any{
		"version": "0.1",
		"log":     map[string]any{"level": "warn", "accesslog": map[string]any{"disabled": true}},
		"storage": map[string]any{
			"filesystem": map[string]any{"rootdirectory": filepath.Join(dir, "storage")},
			"delete":     map[string]any{"enabled": true},
		},
		"http": map[string]any{
			"addr": addr, "secret": "bootstrap-lab-" + name, "relativeurls": true,
			"tls": map[string]any{"certificate": certFile, "key": keyFile},
		},
	}
	if htpasswd != "" {
		cfg["auth"] = map[string]any{"htpasswd": map[string]any{"realm": "bootstrap-lab", "path": htpasswd}}
	}
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "config.yml")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return nil, err
	}
	return startProc(ctx, l, name, addr, "docker-registry", "serve", path)
}

// writeAuthFile writes a containers auth file (auths JSON, 0600) with one entry.
func writeAuthFile(path, host, user, pass string) error {
	f := map[string]any{"auths": map[string]any{
		host: map[string]string{"auth": base64.StdEncoding.EncodeToString([]byte(user + ":" + pass))},
	}}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o600)
}

// secretFile returns the secret in path, creating a random one (0600) on first use.
func secretFile(path string) (string, error) {
	if err := writeIfMissing(path, []byte(randomSecret()), 0o600); err != nil {
		return "", err
	}
	b, err := os.ReadFile(path)
	return string(b), err
}
