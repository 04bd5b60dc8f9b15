package harness

import (
	"context"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"

	"github.com/bootstrap-dev/bootstrap/internal/childproc"
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
	// Cache, when set, is a directory holding a seeded registry storage shared by many labs (the
	// e2e tests): a new lab copies it instead of pushing, and the first lab fills it.
	Cache string
	p     *childproc.Proc
	addr  string
	dir   string
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
	marker := filepath.Join(s.dir, "seeded")
	if s.Cache != "" {
		if err := fromCache(s.Cache, s.dir); err != nil {
			return err
		}
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
	isc, err := os.ReadFile(marker)
	if err != nil {
		if isc, err = s.Seed(ctx, s.addr, filepath.Join(l.Dir, CAFile)); err != nil {
			_ = s.p.Stop()
			return fmt.Errorf("seed: %w", err)
		}
		if err := os.WriteFile(marker, isc, 0o644); err != nil {
			return err
		}
		if s.Cache != "" {
			if err := toCache(s.dir, s.Cache); err != nil {
				return err
			}
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

// Addr is the registry's host:port once started.
func (s *Source) Addr() string { return s.addr }

// Stop implements Component.
func (s *Source) Stop(context.Context) error { return s.p.Stop() }

// Describe implements Describer.
func (s *Source) Describe() string {
	what := "empty"
	if s.Seed != nil {
		what = "seeded: release payloads (" + ReleaseVersion + " and the upgrade releases to " + UpgradeTarget + "), operator catalogs, extra images"
	}
	return fmt.Sprintf("source    https://%s docker-registry standing in for quay.io and registry.redhat.io (%s)", s.addr, what)
}

// fromCache copies a seeded storage and its marker from cache into dir, unless dir is seeded
// already or cache is not.
func fromCache(cache, dir string) error {
	if _, err := os.Stat(filepath.Join(dir, "seeded")); err == nil {
		return nil
	}
	if _, err := os.Stat(filepath.Join(cache, "seeded")); err != nil {
		return nil
	}
	if err := copyTree(filepath.Join(cache, "storage"), filepath.Join(dir, "storage")); err != nil {
		return fmt.Errorf("source cache: %w", err)
	}
	return copyFile(filepath.Join(cache, "seeded"), filepath.Join(dir, "seeded"))
}

// toCache fills an empty cache from a freshly seeded dir; the marker is written last.
func toCache(dir, cache string) error {
	if _, err := os.Stat(filepath.Join(cache, "seeded")); err == nil {
		return nil
	}
	if err := copyTree(filepath.Join(dir, "storage"), filepath.Join(cache, "storage")); err != nil {
		return fmt.Errorf("source cache: %w", err)
	}
	return copyFile(filepath.Join(dir, "seeded"), filepath.Join(cache, "seeded"))
}

func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		return copyFile(p, filepath.Join(dst, rel))
	})
}

func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o644)
}
