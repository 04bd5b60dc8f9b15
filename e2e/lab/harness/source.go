package harness

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"

	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// Seeder pushes the lab's source content into the source registry at host (TLS, trusted through
// caFile) and returns the ImageSetConfiguration that selects it. It is called on every start and
// must be idempotent (deterministic content: pushing it again changes no digest).
type Seeder func(ctx context.Context, host, caFile string) (isc []byte, err error)

// Source is the connected side's registry (quay.io, registry.redhat.io on the internet): a second
// docker-registry with TLS from the lab CA, seeded by Seed. The profile reads it through
// mirror.source.registry, which overrides the host of every source reference, so the
// ImageSetConfiguration keeps the public names.
type Source struct {
	// Seed fills the registry; nil leaves it empty and keeps the Files component's ISC.
	Seed Seeder
	p    *proc
	addr string
	dir  string
}

// Name implements Component.
func (*Source) Name() string { return "source" }

// Start implements Component.
func (s *Source) Start(ctx context.Context, l *Lab) error {
	s.dir = filepath.Join(l.Dir, "source")
	_, certFile, keyFile, err := serverCert(l, filepath.Join(s.dir, "tls"), 61)
	if err != nil {
		return err
	}
	port, err := l.FreePort("source", 61)
	if err != nil {
		return err
	}
	s.addr = net.JoinHostPort(l.IP(61).String(), strconv.Itoa(port))
	if s.p, err = startRegistry(ctx, l, "source", s.addr, s.dir, certFile, keyFile, ""); err != nil {
		return err
	}
	if s.Seed == nil {
		return nil
	}
	// A lab dir seeded before keeps its content (same seed, same digests): skip the pushes.
	marker := filepath.Join(s.dir, "seeded")
	isc, err := os.ReadFile(marker)
	if err != nil {
		if isc, err = s.Seed(ctx, s.addr, filepath.Join(l.Dir, CAFile)); err != nil {
			_ = s.p.stop()
			return fmt.Errorf("seed: %w", err)
		}
		if err := os.WriteFile(marker, isc, 0o644); err != nil {
			return err
		}
	}
	// The seeded ISC replaces the placeholder: written only when it differs, so a lab dir's
	// mirror fingerprint holds across starts.
	path := filepath.Join(l.Dir, "mirror", "imageset-config.yaml")
	if old, err := os.ReadFile(path); err == nil && string(old) == string(isc) {
		return nil
	}
	return os.WriteFile(path, isc, 0o644)
}

// Configure implements Component.
func (s *Source) Configure(st *site.Site, _ *Lab) error {
	st.Mirror.Source.Registry = s.addr
	st.Mirror.Source.CAFile = CAFile
	return nil
}

// Stop implements Component.
func (s *Source) Stop(context.Context) error { return s.p.stop() }

// Describe implements Describer.
func (s *Source) Describe() string {
	what := "empty"
	if s.Seed != nil {
		what = "seeded: release payload, operator catalog, extra images"
	}
	return fmt.Sprintf("source    https://%s docker-registry standing in for quay.io and registry.redhat.io (%s)", s.addr, what)
}
