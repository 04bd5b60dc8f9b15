package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/regclient/regclient"
	"github.com/regclient/regclient/config"

	"github.com/bootstrap-dev/bootstrap/internal/mirror/mirrortest"
	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// Registry runs the lab's two registries (internal/mirror/mirrortest: distribution v3 in
// process, TLS on 127.0.0.1): the source, standing in for quay.io and seeded with a synthetic
// release payload of the profile's version (components listed in image-references), and the
// site's registry, the Quay stand-in, with htpasswd credentials in an auth file. The profile
// reads the release through mirror.source.registry, as a proxied or connected site does.
//
// The registries listen on 127.0.0.1:random (httptest, whose certificate names 127.0.0.1); a
// forwarder on a port the lab dir remembers gives each a stable 127.0.0.1:PORT, so the profile
// does not change between starts.
type Registry struct {
	// Components is the number of release component images; 0 means 20.
	Components int
	// LayerKiB scales the synthetic layers; 0 means 64.
	LayerKiB int

	src, dst       *mirrortest.Registry
	srcFwd, dstFwd *forwarder
	release        *mirrortest.Release
	dir            string
	authFile       string
}

// Name implements Component.
func (*Registry) Name() string { return "registry" }

// Start implements Component: both registries, then the release pushed to the source (the
// content is deterministic, so a lab dir's second start pushes nothing new).
func (r *Registry) Start(ctx context.Context, l *Lab) error {
	r.dir = l.Dir
	n, kib := r.Components, r.LayerKiB
	if n == 0 {
		n = 20
	}
	if kib == 0 {
		kib = 64
	}
	var err error
	if r.src, err = mirrortest.StartRegistry(mirrortest.RegistryOptions{Dir: filepath.Join(l.Dir, "registry", "source"), TLS: true}); err != nil {
		return fmt.Errorf("source registry: %w", err)
	}
	// One password per lab dir: the auth file's content feeds the iso stage's pull secret, so a
	// new password would make it (and boot) run again on every start.
	pwFile := filepath.Join(l.Dir, "secrets", "registry-password")
	if err := writeIfMissing(pwFile, []byte(randomSecret()), 0o600); err != nil {
		r.src.Close()
		return err
	}
	pw, err := os.ReadFile(pwFile)
	if err != nil {
		r.src.Close()
		return err
	}
	password := string(pw)
	if r.dst, err = mirrortest.StartRegistry(mirrortest.RegistryOptions{Dir: filepath.Join(l.Dir, "registry", "site"), TLS: true,
		User: "lab", Password: password}); err != nil {
		r.src.Close()
		return fmt.Errorf("site registry: %w", err)
	}
	if r.srcFwd, err = forwardStable(l, "registry-source", r.src.Host); err == nil {
		r.dstFwd, err = forwardStable(l, "registry-site", r.dst.Host)
	}
	if err != nil {
		_ = r.Stop(ctx)
		return err
	}
	// The credentials are for the address the profile names.
	r.authFile = filepath.Join(l.Dir, "secrets", "registry-auth.json")
	if err := mirrortest.WriteAuthFile(r.authFile, r.dstFwd.Addr(), "lab", password); err != nil {
		_ = r.Stop(ctx)
		return err
	}
	ca, err := os.ReadFile(r.src.CAFile)
	if err != nil {
		_ = r.Stop(ctx)
		return err
	}
	rc := regclient.New(regclient.WithConfigHost(config.Host{Name: r.src.Host, RegCert: string(ca)}))
	b := mirrortest.NewBuilder(rc, 1)
	r.release, err = b.Release(ctx, mirrortest.ReleaseSpec{PushHost: r.src.Host, NameHost: "quay.io",
		Version: l.Site.Cluster.Release.Version, Components: n, LayerKiB: kib})
	if err != nil {
		_ = r.Stop(ctx)
		return fmt.Errorf("seed the release: %w", err)
	}
	return nil
}

// Configure implements Component.
func (r *Registry) Configure(s *site.Site, _ *Lab) error {
	rel := func(p string) string {
		if q, err := filepath.Rel(r.dir, p); err == nil {
			return q
		}
		return p
	}
	s.Registry.Host, s.Registry.CAFile, s.Registry.AuthFile = r.dstFwd.Addr(), rel(r.dst.CAFile), rel(r.authFile)
	s.Mirror.Source.Registry, s.Mirror.Source.CAFile = r.srcFwd.Addr(), rel(r.src.CAFile)
	return nil
}

// Stop implements Component.
func (r *Registry) Stop(context.Context) error {
	for _, f := range []*forwarder{r.srcFwd, r.dstFwd} {
		if f != nil {
			_ = f.Close()
		}
	}
	r.srcFwd, r.dstFwd = nil, nil
	if r.dst != nil {
		r.dst.Close()
	}
	if r.src != nil {
		r.src.Close()
	}
	r.src, r.dst = nil, nil
	return nil
}

// Describe implements Describer.
func (r *Registry) Describe() string {
	return fmt.Sprintf("registry  source %s (quay.io stand-in: %s, %d components), site %s (TLS, htpasswd)",
		r.srcFwd.Addr(), r.release.Image, len(r.release.Components), r.dstFwd.Addr())
}

// forwardStable relays 127.0.0.1:PORT, PORT remembered under key, to target.
func forwardStable(l *Lab, key, target string) (*forwarder, error) {
	ln, err := listenRemembered(l, key, "127.0.0.1")
	if err != nil {
		return nil, err
	}
	return forward(ln, target), nil
}
