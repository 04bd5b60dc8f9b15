package bmctest

import (
	"crypto/tls"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"time"
)

// Options shape one simulated BMC (an iDRAC9 unless Profile says otherwise).
type Options struct {
	// Profile is the Redfish implementation reproduced; default ProfileIDRAC9.
	Profile      Profile
	Firmware     string        // BMC firmware; iDRAC default 6.10.30.00 (media under the System)
	Model        string        // default PowerEdge R750 (iDRAC), the profile's model otherwise
	Username     string        // default root
	Password     string        // default calvin
	MACs         []string      // system NIC MACs, as the iDRAC reports them
	Power        string        // initial power state: Off (default) or On
	Latency      time.Duration // added to every call
	BootDelay    time.Duration // from a power action to the boot device chosen; default 20ms
	JobDelay     time.Duration // how long an ImportSystemConfiguration job runs; default 10ms
	SessionLimit int           // default 8, as iDRAC9
	// IgnoreBootOnce makes the server ignore every one-time boot and start from its disk while
	// the BMC still shows the override consumed (seen on iDRAC9 with the BIOS in legacy mode or
	// the virtual optical drive missing from the UEFI boot options).
	IgnoreBootOnce bool
	// NoopReset makes ComputerSystem.Reset answer 204 and do nothing: no restart, PowerState and
	// LastResetTime unchanged, a one-time override still armed (a hung BMC or host firmware; a
	// "reset" that never reaches the host, as Ironic's reboot verification guards against).
	NoopReset bool
	// Manufacturer replaces the profile's System Manufacturer (e.g. Supermicro).
	Manufacturer string
	// Media replaces the profile's virtual-media slots.
	Media []MediaSlot
	// RequireTransferProtocol refuses InsertMedia without TransferProtocolType (HTTP 400
	// ActionParameterMissing); RequireCredentials refuses it without UserName and Password.
	RequireTransferProtocol, RequireCredentials bool
	// ActionInfo publishes the InsertMedia action's @Redfish.ActionInfo with its parameters.
	ActionInfo bool
	// RequireIfMatch answers a PATCH of the System or a slot without If-Match with 428, and one
	// naming another version with 412; GETs carry the ETag.
	RequireIfMatch bool
	// AsyncInsert keeps a slot reading Inserted=false for this long after an insert.
	AsyncInsert time.Duration
	// StuckJobs is how many Lifecycle Controller jobs sit in the queue, Scheduled forever (the
	// state that makes iDRAC answer SYS446 and ImportSystemConfiguration never finish).
	StuckJobs int
	// BootEnabledAllowed, when non-nil, replaces the profile's
	// BootSourceOverrideEnabled@Redfish.AllowableValues (an empty, non-nil list omits it).
	BootEnabledAllowed []string
	// LiveReads, when set, makes a server booted from its ISO keep reading it every LiveReads
	// (a live system reads its root file system from the virtual CD) until it restarts, is
	// powered off, or the media is ejected; Stats counts the reads and failures.
	LiveReads time.Duration
	// NoMediaPatch makes the patch-only profile's slots refuse PATCH too (Allow: GET): media
	// in them cannot be removed over Redfish at all.
	NoMediaPatch bool
	// StaleMedia, when set, is an image left inserted in the removable-disk slot and the CD slot.
	StaleMedia string
	// Listen is the address to listen on ("127.0.0.101:8443"); empty: 127.0.0.1 on a free port.
	Listen string
	// Cert is the TLS certificate; nil: a fresh one per simulator.
	Cert *Cert
	// Fetch is the client the iDRAC uses to read inserted media; default: no proxy, 10s timeout.
	Fetch *http.Client
}

// Fault makes the next matching calls fail or slow down.
type Fault struct {
	// Op is one of: session, insert, eject, boot-override, reset, scp, get, any.
	Op        string
	Status    int    // HTTP status to answer (0: do not fail, only Delay)
	MessageID string // e.g. IDRAC.2.8.VRM0021, IDRAC.2.8.SYS446, IDRAC.2.8.RAC0218
	Message   string
	Times     int // how many calls it hits; 0 means every call
	Delay     time.Duration
}

// Stats is what the simulator counted.
type Stats struct {
	PowerActions   int    // reset actions accepted (On, ForceRestart, …)
	Writes         int    // POST, PATCH, PUT, DELETE received (sessions included)
	Boots          int    // completed boots
	BootedFrom     string // image URL the last boot came from, or "disk"
	RangeRequests  int    // range requests made to fetch inserted media
	ActiveSessions int
	MaxSessions    int // most sessions open at once
	Inserted       string
	Power          string
	// Slots maps every slot holding media to its image (the CD slot included).
	Slots map[string]string
	// Override is the boot override as the BMC reports it: Target/Enabled.
	Override string
	// LiveReads and LiveReadErrors count the live system's reads of its ISO (Options.LiveReads);
	// LastLiveRead and LastLiveReadError are the times of the last successful and failed ones.
	// LiveEnded is when the last live system stopped reading (its media ejected, the server
	// restarted or powered off); zero while one reads.
	LiveReads, LiveReadErrors       int
	LastLiveRead, LastLiveReadError time.Time
	LiveEnded                       time.Time
}

// BMC is one simulated iDRAC9 on a loopback TLS listener.
type BMC struct {
	opts     Options
	srv      *httptest.Server
	sys, mgr string // the System's and the Manager's paths
	name     string // the System's Name

	mu       sync.Mutex
	faults   []*Fault
	stats    Stats
	power    string
	boot     bootState
	attrs    map[string]string // iDRAC attributes (ServerBoot.1.*)
	media    []*slot
	sessions map[string]string // token → session path
	nextID   int
	jobs     map[string]*job
	nics     []string
	pending  int             // power actions whose boot has not happened yet
	idle     []chan struct{} // Idle callers waiting for pending to reach 0
	closed   bool
	bootGen  int // incremented by every boot: a live system's reads stop when it changes
	// lastReset is LastResetTime (iDRAC9 reports it; sushy-tools and the mockup do not).
	lastReset time.Time
}

type bootState struct {
	Target, Enabled, Mode string
	viaStandard           bool
}

type slot struct {
	ID, Name string
	Types    []string
	Inserted bool
	Image    string
	taken    bool      // refuses inserts (MediaSlot.Taken)
	readyAt  time.Time // AsyncInsert: reads Inserted=false until then
}

type job struct {
	doneAt time.Time
	attrs  map[string]string
	state  string
}

// New starts a simulated iDRAC9 on 127.0.0.1 with TLS (the httptest certificate; see CAPEM).
func New(o Options) *BMC {
	b := newSim(o, "", "", "System")
	b.start()
	return b
}

// newSim builds a simulator without a listener; sys and mgr, when set, replace the profile's
// System and Manager paths (a member of a multi-system service), name is the System's Name.
func newSim(o Options, sys, mgr, name string) *BMC {
	if o.Profile == "" {
		o.Profile = ProfileIDRAC9
	}
	if o.Firmware == "" {
		o.Firmware = map[Profile]string{ProfileIDRAC9: "6.10.30.00", ProfileGeneric: "1.0.0", ProfilePatchOnly: "1.00"}[o.Profile]
	}
	if o.Model == "" {
		o.Model = map[Profile]string{ProfileIDRAC9: "PowerEdge R750", ProfileGeneric: "Standard PC (Q35 + ICH9, 2009)", ProfilePatchOnly: "3500RX"}[o.Profile]
	}
	if o.Username == "" {
		o.Username = "root"
	}
	if o.Password == "" {
		o.Password = "calvin"
	}
	if o.Power == "" {
		o.Power = "Off"
	}
	if o.BootDelay == 0 {
		o.BootDelay = 20 * time.Millisecond
	}
	if o.JobDelay == 0 {
		o.JobDelay = 10 * time.Millisecond
	}
	if o.SessionLimit == 0 {
		o.SessionLimit = 8
	}
	if o.Fetch == nil {
		o.Fetch = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Proxy: nil}}
	}
	b := &BMC{
		opts:     o,
		power:    o.Power,
		boot:     bootState{Target: "None", Enabled: "Disabled", Mode: "UEFI"},
		attrs:    map[string]string{"ServerBoot.1.BootOnce": "Disabled", "ServerBoot.1.FirstBootDevice": "Normal"},
		sessions: map[string]string{},
		jobs:     map[string]*job{},
		nics:     o.MACs,
	}
	b.sys, b.mgr = o.Profile.paths()
	b.lastReset = time.Now().Add(-48 * time.Hour).UTC()
	if sys != "" {
		b.sys, b.mgr = sys, mgr
	}
	b.name = name
	switch {
	case o.Profile == ProfileGeneric:
		// sushy-tools starts with a persistent boot from the disk.
		b.boot = bootState{Target: "Hdd", Enabled: "Continuous", Mode: "UEFI"}
		b.media = []*slot{
			{ID: "Cd", Name: "Virtual CD", Types: []string{"CD", "DVD"}},
			{ID: "Floppy", Name: "Virtual Removable Media", Types: []string{"Floppy", "USBStick"}},
		}
	case o.Profile == ProfilePatchOnly:
		b.media = []*slot{
			{ID: "CD1", Name: "Virtual CD", Types: []string{"CD", "DVD"}},
			{ID: "USB1", Name: "Virtual USB", Types: []string{"USBStick"}},
		}
	case b.systemLayout():
		b.media = []*slot{
			{ID: "1", Name: "VirtualMedia 1", Types: []string{"CD", "DVD"}},
			{ID: "2", Name: "VirtualMedia 2", Types: []string{"USBStick"}},
		}
	default:
		// Before 6.00 the removable disk is listed first: the order that made bmclib v2.3.4
		// pick the wrong slot.
		b.media = []*slot{
			{ID: "RemovableDisk", Name: "Virtual Removable Disk", Types: []string{"USBStick"}},
			{ID: "CD", Name: "Virtual CD", Types: []string{"CD", "DVD"}},
		}
	}
	if len(o.Media) > 0 {
		b.media = nil
		for _, m := range o.Media {
			b.media = append(b.media, &slot{ID: m.ID, Name: "Virtual " + m.ID, Types: m.Types, Inserted: m.Image != "", Image: m.Image, taken: m.Taken})
		}
	}
	if o.StaleMedia != "" {
		for _, s := range b.media {
			s.Inserted, s.Image = true, o.StaleMedia
		}
	}
	for i := 0; i < o.StuckJobs; i++ {
		b.nextID++
		b.jobs[b.mgr+"/Jobs/JID_"+itoa(900000000+b.nextID)] = &job{state: "Scheduled", doneAt: time.Now().Add(1000 * time.Hour)}
	}
	b.stats.Power = b.power
	if o.Cert == nil {
		c, err := NewCert()
		if err != nil {
			panic("bmctest: " + err.Error()) // crypto/rand failing: nothing a test can do
		}
		b.opts.Cert = c
	}
	return b
}

// start serves b on its own loopback TLS listener.
func (b *BMC) start() {
	o := b.opts
	b.srv = httptest.NewUnstartedServer(http.HandlerFunc(b.serve))
	if o.Listen != "" {
		l, err := net.Listen("tcp", o.Listen)
		if err != nil {
			panic("bmctest: listen " + o.Listen + ": " + err.Error()) // as httptest does
		}
		b.srv.Listener.Close()
		b.srv.Listener = l
	}
	// iDRAC9 offers classic curves only (no post-quantum hybrid), which also keeps 128 simulated
	// handshakes cheap.
	b.srv.TLS = &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{o.Cert.TLS},
		CurvePreferences: []tls.CurveID{tls.X25519, tls.CurveP256}}
	b.srv.Config.ErrorLog = log.New(io.Discard, "", 0) // clients killed mid-handshake are expected
	b.srv.StartTLS()
}

// URL is the BMC's address (https://127.0.0.1:port).
func (b *BMC) URL() string { return b.srv.URL }

// Profile is the Redfish implementation the simulator reproduces.
func (b *BMC) Profile() Profile { return b.opts.Profile }

// Firmware is the iDRAC firmware version the simulator reports.
func (b *BMC) Firmware() string { return b.opts.Firmware }

// CAPEM is the PEM certificate to trust for this BMC.
func (b *BMC) CAPEM() []byte { return b.opts.Cert.CAPEM }

// WriteCA writes CAPEM to path.
func (b *BMC) WriteCA(path string) error { return os.WriteFile(path, b.CAPEM(), 0o644) }

// Inject adds a fault.
func (b *BMC) Inject(f Fault) {
	b.mu.Lock()
	defer b.mu.Unlock()
	fc := f
	b.faults = append(b.faults, &fc)
}

// FillSessions opens n sessions as another user would, to exhaust the session table.
func (b *BMC) FillSessions(n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i := 0; i < n; i++ {
		b.nextID++
		b.sessions["other-"+itoa(b.nextID)] = "/redfish/v1/SessionService/Sessions/" + itoa(b.nextID)
	}
	b.stats.ActiveSessions = len(b.sessions)
}

// Stats returns a snapshot of the counters.
func (b *BMC) Stats() Stats {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.advance()
	s := b.stats
	s.ActiveSessions = len(b.sessions)
	s.Power = b.power
	s.Slots = map[string]string{}
	for _, m := range b.media {
		if m.Inserted && hasType(m.Types, "CD") {
			s.Inserted = m.Image
		}
		if m.Inserted {
			s.Slots[m.ID] = m.Image
		}
	}
	s.Override = b.boot.Target + "/" + b.boot.Enabled
	return s
}

// Close stops the listener.
func (b *BMC) Close() {
	b.mu.Lock()
	b.closed = true
	b.wakeIdle()
	b.mu.Unlock()
	if b.srv != nil {
		b.srv.Close()
	}
}

func (b *BMC) systemLayout() bool {
	switch b.opts.Profile {
	case ProfileGeneric:
		return false
	case ProfilePatchOnly:
		return true
	}
	return versionLess("6.00.00.00", b.opts.Firmware) || b.opts.Firmware == "6.00.00.00"
}

// oldBoot: iDRAC9 firmware before 4.40 accepts the standard Cd override but boots the disk.
func (b *BMC) oldBoot() bool { return b.idrac() && versionLess(b.opts.Firmware, "4.40.00.00") }

func hasType(ts []string, t string) bool {
	for _, x := range ts {
		if x == t {
			return true
		}
	}
	return false
}

func versionLess(a, b string) bool {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(pa) || i < len(pb); i++ {
		var x, y int
		if i < len(pa) {
			x = atoi(pa[i])
		}
		if i < len(pb) {
			y = atoi(pb[i])
		}
		if x != y {
			return x < y
		}
	}
	return false
}
