package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// SiteFileName is the profile the lab writes into its dir.
const SiteFileName = "site.yaml"

// stateFileName remembers the ports the lab's components used, so a lab dir keeps its profile.
const stateFileName = "lab-state.json"

// Component is one stand-in.
type Component interface {
	// Name is a short stable word ("dns", "ntp", "registry").
	Name() string
	// Start starts the stand-in. It may read l (Dir, IP, Port) and the site built so far. On
	// error it must leave nothing running.
	Start(ctx context.Context, l *Lab) error
	// Configure contributes to the site profile: addresses, files, nodes. Called in order after
	// every component has started.
	Configure(s *site.Site, l *Lab) error
	// Stop stops what Start started. Called in reverse order, also after a failed Up.
	Stop(ctx context.Context) error
}

// Finalizer is implemented by components that need the complete profile (DNS publishes the
// names of every node other components added). Called after every Configure.
type Finalizer interface {
	Finalize(s *site.Site, l *Lab) error
}

// Describer is implemented by components that have something to tell the user after Up
// ("dns 127.81.4.53:40123").
type Describer interface {
	Describe() string
}

// Lab is a running set of stand-ins and the site profile pointing at them.
type Lab struct {
	// Dir holds the profile, the files it references and the components' data.
	Dir string
	// Net is the lab's loopback /24.
	Net netip.Prefix
	// Site is the profile written to SiteFile.
	Site *site.Site
	// SiteFile is the absolute path of the written profile.
	SiteFile string
	// CA issues the certificates of stand-ins that speak TLS; its certificate is CAFile.
	CA *CA

	components []Component
	started    []Component
	state      labState
}

type labState struct {
	Net   string         `json:"net"`
	Ports map[string]int `json:"ports"`
}

// New prepares a lab in dir (created if missing) with the given components; nothing starts
// until Up.
func New(dir string, components ...Component) (*Lab, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("lab: %w", err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, fmt.Errorf("lab: %w", err)
	}
	l := &Lab{Dir: abs, components: components, SiteFile: filepath.Join(abs, SiteFileName)}
	l.state = loadState(abs)
	if p, err := netip.ParsePrefix(l.state.Net); err == nil && p.Addr().IsLoopback() {
		l.Net = p
	} else {
		l.Net = netFor(abs)
		l.state.Net = l.Net.String()
	}
	return l, nil
}

// netFor picks 127.X.Y.0/24 from the lab dir's path, X in 100..227.
func netFor(dir string) netip.Prefix {
	h := fnv.New32a()
	h.Write([]byte(dir))
	v := h.Sum32()
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{127, byte(100 + v%128), byte(v >> 8), 0}), 24)
}

// IP returns host n of the lab's /24.
func (l *Lab) IP(n byte) netip.Addr {
	a := l.Net.Addr().As4()
	a[3] = n
	return netip.AddrFrom4(a)
}

// Port returns the port a component used last time under key (0: none, pick a free one).
func (l *Lab) Port(key string) int { return l.state.Ports[key] }

// RememberPort records the port a component got, for the next Up in the same dir.
func (l *Lab) RememberPort(key string, port int) {
	if l.state.Ports == nil {
		l.state.Ports = map[string]int{}
	}
	l.state.Ports[key] = port
}

// FreePort returns a port free now on lab host .host for a server that starts later (the ISO
// server of the boot stage): the one remembered under key when it is still free, else a new
// one, remembered.
func (l *Lab) FreePort(key string, host byte) (int, error) {
	ip := l.IP(host).String()
	if p := l.Port(key); p > 0 {
		if ln, err := net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(p))); err == nil {
			ln.Close()
			return p, nil
		}
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		return 0, fmt.Errorf("lab: free port on %s: %w", ip, err)
	}
	defer ln.Close()
	p := ln.Addr().(*net.TCPAddr).Port
	l.RememberPort(key, p)
	return p, nil
}

// Up starts every component, builds the profile and writes it. On error everything started is
// stopped again.
func (l *Lab) Up(ctx context.Context) (err error) {
	defer func() {
		if err != nil {
			err = errors.Join(err, l.Down(context.WithoutCancel(ctx)))
		}
	}()
	if l.CA, err = loadOrCreateCA(l.Dir); err != nil {
		return err
	}
	isoPort, err := l.FreePort("iso", 1)
	if err != nil {
		return err
	}
	l.Site = baseSite(l, isoPort)
	for _, c := range l.components {
		if err := c.Start(ctx, l); err != nil {
			return fmt.Errorf("lab: start %s: %w", c.Name(), err)
		}
		l.started = append(l.started, c)
	}
	for _, c := range l.components {
		if err := c.Configure(l.Site, l); err != nil {
			return fmt.Errorf("lab: configure %s: %w", c.Name(), err)
		}
	}
	for _, c := range l.components {
		if f, ok := c.(Finalizer); ok {
			if err := f.Finalize(l.Site, l); err != nil {
				return fmt.Errorf("lab: finalize %s: %w", c.Name(), err)
			}
		}
	}
	if err := writeSite(l.SiteFile, l.Site); err != nil {
		return err
	}
	l.Site.File = l.SiteFile
	return saveState(l.Dir, l.state)
}

// Down stops every started component in reverse order; it reports every failure.
func (l *Lab) Down(ctx context.Context) error {
	var errs []error
	for i := len(l.started) - 1; i >= 0; i-- {
		if err := l.started[i].Stop(ctx); err != nil {
			errs = append(errs, fmt.Errorf("lab: stop %s: %w", l.started[i].Name(), err))
		}
	}
	l.started = nil
	return errors.Join(errs...)
}

// Describe lists the running components, one per line.
func (l *Lab) Describe() string {
	var b strings.Builder
	for _, c := range l.started {
		d := c.Name()
		if ds, ok := c.(Describer); ok {
			d = ds.Describe()
		}
		fmt.Fprintf(&b, "  %s\n", d)
	}
	return b.String()
}

// writeSite writes the profile as JSON, which every YAML parser reads, under a comment header.
// JSON keeps the field names exactly those of the site types' tags.
func writeSite(path string, s *site.Site) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("lab: encode site: %w", err)
	}
	head := "# Site profile of the local lab, written by `go run ./e2e/lab up`. Every address is on\n" +
		"# loopback; paths are relative to this file. Regenerated on every start.\n"
	if err := os.WriteFile(path, append([]byte(head), append(b, '\n')...), 0o644); err != nil {
		return fmt.Errorf("lab: write site: %w", err)
	}
	return nil
}

func loadState(dir string) labState {
	var st labState
	if b, err := os.ReadFile(filepath.Join(dir, stateFileName)); err == nil {
		_ = json.Unmarshal(b, &st) // a damaged state file only costs new ports
	}
	return st
}

func saveState(dir string, st labState) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return fmt.Errorf("lab: encode state: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, stateFileName), b, 0o644); err != nil {
		return fmt.Errorf("lab: write state: %w", err)
	}
	return nil
}
