package preflight

import (
	"net"
	"path/filepath"
	"time"

	"github.com/bootstrap-dev/bootstrap/internal/site"
)

// Defaults for Options.
const (
	// DefaultMinFreeBytes is the free space asked of the work dir when the mirror plan has not
	// said how much it needs (a release payload with a few operators).
	DefaultMinFreeBytes int64 = 20 << 30
	// DefaultMaxClockOffset is how far the jump host clock may be from the NTP sources. The
	// agent ISO's certificates are stamped with the jump host's clock; nodes reject certificates
	// from the future.
	DefaultMaxClockOffset = 2 * time.Second
	// defaultProbeTimeout bounds one TCP probe of a VIP.
	defaultProbeTimeout = time.Second
)

// defaultVIPPorts are probed to see whether a VIP is already taken: the API, the machine config
// server, ingress and SSH.
var defaultVIPPorts = []int{6443, 22623, 443, 80, 22}

// DefaultVIPPorts returns the TCP ports probed on each VIP when Options.VIPPorts is empty.
func DefaultVIPPorts() []int { return append([]int(nil), defaultVIPPorts...) }

// Options tune the checks built by Checks. The zero value uses the defaults.
type Options struct {
	// WorkDir is the run's work dir; its file system is checked for free space.
	WorkDir string
	// MinFreeBytes is the free space the work dir needs (the mirror plan's total when known).
	MinFreeBytes int64
	// MaxClockOffset is the tolerated offset between the local clock and each NTP source.
	MaxClockOffset time.Duration
	// Resolver is the system resolver, used when cluster.dnsServers is empty; nil means
	// net.DefaultResolver.
	Resolver *net.Resolver
	// VIPPorts are the TCP ports probed on each VIP; empty means DefaultVIPPorts.
	VIPPorts []int
	// ProbeTimeout bounds each TCP probe of a VIP.
	ProbeTimeout time.Duration
	// ClusterInstalled says the install stage has already succeeded, so the VIPs are expected
	// to answer (the cluster holds them) and the in-use check passes with a note.
	ClusterInstalled bool
	// ISOURLs are the URLs the boot stage gives each node's BMC, once the iso stage has published
	// them (by node name); a node not listed is expected at iso.baseURL/agent.x86_64.iso.
	ISOURLs map[string]string
	// ARPTable is the kernel neighbour table read after probing VIPs; "" means /proc/net/arp.
	ARPTable string
	// Now is the clock used for certificate validity; nil means time.Now.
	Now func() time.Time
}

func (o Options) withDefaults() Options {
	if o.MinFreeBytes <= 0 {
		o.MinFreeBytes = DefaultMinFreeBytes
	}
	if o.MaxClockOffset <= 0 {
		o.MaxClockOffset = DefaultMaxClockOffset
	}
	if o.Resolver == nil {
		o.Resolver = net.DefaultResolver
	}
	if len(o.VIPPorts) == 0 {
		o.VIPPorts = DefaultVIPPorts()
	}
	if o.ProbeTimeout <= 0 {
		o.ProbeTimeout = defaultProbeTimeout
	}
	if o.ARPTable == "" {
		o.ARPTable = "/proc/net/arp"
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Checks builds every check the site profile calls for. The result is deterministic for a given
// site and options; the runner orders results by category.
func Checks(s *site.Site, o Options) []Check {
	o = o.withDefaults()
	var out []Check
	for _, g := range groups() {
		out = append(out, g(s, o)...)
	}
	return out
}

// group builds the checks of one area from the profile. A group returns no checks when the
// profile does not use what it checks.
type group func(s *site.Site, o Options) []Check

// groups lists every group. To add checks (registry, bmc, git), write a group in its own file
// and add it here.
func groups() []group {
	return []group{
		diskChecks,
		serveChecks,
		fileChecks,
		dnsChecks,
		ntpChecks,
		vipChecks,
		bmcChecks,
		gitChecks,
	}
}

// resolvePath makes a profile path absolute relative to the profile's directory (site.Load does
// this too; sites built in code may hold relative paths).
func resolvePath(s *site.Site, p string) string {
	if p == "" || filepath.IsAbs(p) || s.File == "" {
		return p
	}
	return filepath.Join(filepath.Dir(s.File), p)
}
