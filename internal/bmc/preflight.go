package bmc

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Status of a preflight finding.
type Status string

// Finding statuses.
const (
	Pass Status = "pass"
	Warn Status = "warn"
	Fail Status = "fail"
)

// Preflight check names (stable: they appear in the preflight table and --json output).
const (
	CheckReachable  = "bmc-reachable"
	CheckTLS        = "bmc-tls"
	CheckAuth       = "bmc-credentials"
	CheckRedfish    = "bmc-redfish-version"
	CheckFirmware   = "bmc-firmware"
	CheckMedia      = "bmc-virtual-media"
	CheckBootTarget = "bmc-boot-target"
	CheckStaleMedia = "bmc-stale-media"
	CheckISOURL     = "bmc-iso-url"
	CheckMAC        = "bmc-mac"
	CheckSessions   = "bmc-sessions"
	CheckJobQueue   = "bmc-job-queue"
)

// PreflightCheckNames lists every check Preflight can report, in the order it reports them.
func PreflightCheckNames() []string {
	return []string{CheckISOURL, CheckReachable, CheckTLS, CheckAuth, CheckRedfish, CheckFirmware,
		CheckMedia, CheckBootTarget, CheckStaleMedia, CheckMAC, CheckSessions, CheckJobQueue}
}

// Finding is one preflight result for one node.
type Finding struct {
	Node    string `json:"node"`
	Check   string `json:"check"`
	Status  Status `json:"status"`
	Message string `json:"message"`
	Remedy  string `json:"remedy,omitempty"`
}

// Expect is what the profile says about a node, to compare with what its BMC reports.
type Expect struct {
	BootMAC string   // the MAC the node boots from
	MACs    []string // interface MACs from the profile
	ISOURL  string   // the URL the BMC will be given
}

// PreflightNode is one node to check.
type PreflightNode struct {
	Target Target
	Expect Expect
}

// minRedfish is the oldest Redfish protocol we expect (iDRAC9 3.x reports 1.4.0; 1.6 brought
// the VirtualMedia actions we rely on).
const minRedfish = "1.6.0"

// Preflight checks one node's BMC, read-only: only GETs with basic auth, so not even a session
// is created. Once a check fails that later ones depend on (reachability, TLS, credentials), it
// stops there.
func Preflight(ctx context.Context, n PreflightNode, opts ...Option) []Finding {
	cfg, err := newConfig(opts)
	if err != nil {
		return []Finding{{Node: n.Target.Node, Check: CheckReachable, Status: Fail, Message: err.Error()}}
	}
	return preflight(ctx, n, cfg)
}

// PreflightAll checks every node, WithConcurrency at a time; findings come in node order.
func PreflightAll(ctx context.Context, nodes []PreflightNode, opts ...Option) ([]Finding, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	out := make([][]Finding, len(nodes))
	forEach(len(nodes), cfg.concurrency, func(i int) { out[i] = preflight(ctx, nodes[i], cfg) })
	return slices.Concat(out...), nil
}

func preflight(ctx context.Context, n PreflightNode, cfg config) []Finding {
	node := n.Target.Node
	var fs []Finding
	add := func(check string, s Status, msg, remedy string) {
		fs = append(fs, Finding{Node: node, Check: check, Status: s, Message: msg, Remedy: remedy})
	}
	if n.Expect.ISOURL != "" {
		if l := len(n.Expect.ISOURL); l > MaxMediaURL {
			add(CheckISOURL, Fail, fmt.Sprintf("ISO URL is %d characters; iDRAC9 InsertMedia accepts at most %d", l, MaxMediaURL),
				"shorten iso.baseURL (an IP address instead of a long host name, a shorter path)")
		} else {
			add(CheckISOURL, Pass, fmt.Sprintf("ISO URL is %d characters (limit %d)", l, MaxMediaURL), "")
		}
	}
	c, err := dial(ctx, n.Target, cfg)
	if err != nil {
		switch {
		case errors.Is(err, ErrTLS):
			add(CheckReachable, Pass, "BMC answers on "+n.Target.Address, "")
			add(CheckTLS, Fail, "certificate not trusted: "+rootCause(err), remedyFor("", ErrTLS))
		case errors.Is(err, ErrAuth):
			add(CheckReachable, Pass, "BMC answers on "+n.Target.Address, "")
			add(CheckAuth, Fail, "BMC refused user "+n.Target.Username, remedyFor("", ErrAuth))
		case errors.Is(err, ErrUnreachable):
			add(CheckReachable, Fail, "no Redfish service at "+n.Target.Address+": "+rootCause(err), remedyFor("", ErrUnreachable))
		default:
			add(CheckReachable, Fail, rootCause(err), remedyFor("", err))
		}
		return fs
	}
	defer c.raw.hc.CloseIdleConnections()
	add(CheckReachable, Pass, "Redfish service at "+n.Target.Address, "")
	if n.Target.Insecure {
		add(CheckTLS, Warn, "TLS verification is off for this BMC (bmc.insecure: true); the report will say so",
			"set bmc.caFile to the CA that signed the iDRAC certificate and remove bmc.insecure")
	} else {
		add(CheckTLS, Pass, "certificate verified", "")
	}
	add(CheckAuth, Pass, "credentials accepted for user "+n.Target.Username, "")

	st, err := c.Inspect(ctx)
	if err != nil {
		add(CheckFirmware, Fail, "cannot read the system: "+err.Error(), remedyFor(StepInspect, err))
		return fs
	}
	if CompareVersions(st.RedfishVersion, minRedfish) < 0 {
		add(CheckRedfish, Warn, "Redfish "+st.RedfishVersion+" is older than "+minRedfish, "update the iDRAC firmware")
	} else {
		add(CheckRedfish, Pass, "Redfish "+st.RedfishVersion, "")
	}
	desc := fmt.Sprintf("%s %s, BMC firmware %s, power %s", st.Vendor, st.Model, st.Firmware, st.Power)
	switch {
	case !st.IsDell():
		add(CheckFirmware, Warn, desc+": not a Dell iDRAC; the standard Redfish flow will be used untested",
			"check bmc.address points at the right server; boot one node first and watch its console")
	case CompareVersions(st.Firmware, FirmwareFloor) < 0:
		add(CheckFirmware, Warn, desc+": below the iDRAC9 floor "+FirmwareFloor+" (one-time boot goes through ImportSystemConfiguration)",
			"update iDRAC9 firmware to "+FirmwareFloor+" or later")
	default:
		add(CheckFirmware, Pass, desc, "")
	}
	if slot, ok := st.CDSlot(); ok {
		add(CheckMedia, Pass, fmt.Sprintf("virtual CD slot %s (%s layout)", slot.Path, st.Layout), "")
	} else {
		add(CheckMedia, Fail, "no virtual-media slot accepts CD/DVD images", "enable Virtual Media in the iDRAC (Configuration > Virtual Media, Attach Mode: Auto-Attach or Attached) and check the license")
	}
	switch {
	case len(st.Boot.Allowed) == 0:
		add(CheckBootTarget, Warn, "the BMC does not list its allowed boot targets",
			"check in the iDRAC (Configuration > BIOS Settings > Boot Settings) that the boot mode is UEFI")
	case slices.Contains(st.Boot.Allowed, "Cd"):
		add(CheckBootTarget, Pass, "Cd is an allowed boot override target", "")
	default:
		add(CheckBootTarget, Fail, "Cd is not among the allowed boot targets "+strings.Join(st.Boot.Allowed, ", "), "check the BIOS boot mode (UEFI) and that virtual media is attached")
	}
	var stale []string
	for _, m := range st.Media {
		if m.Inserted && m.Image != n.Expect.ISOURL {
			stale = append(stale, m.ID+"="+m.Image)
		}
	}
	if len(stale) > 0 {
		add(CheckStaleMedia, Warn, "media attached: "+strings.Join(stale, ", ")+"; the boot stage ejects it on any node it boots (nodes kept from an earlier attempt are not touched)",
			"nothing to do unless someone is using it: close their virtual console session first")
	} else {
		add(CheckStaleMedia, Pass, "no stale media attached", "")
	}
	fs = append(fs, macFinding(node, st, n.Expect))
	fs = append(fs, c.sessionFinding(ctx))
	if st.IsDell() && st.managerPath != "" {
		fs = append(fs, c.jobQueueFinding(ctx, st.managerPath))
	}
	return fs
}

// macFinding is the MAC truth check: every MAC the profile gives this node must be among the
// system NICs its BMC reports; otherwise the BMC address or a cable belongs to another server.
func macFinding(node string, st State, e Expect) Finding {
	f := Finding{Node: node, Check: CheckMAC}
	want := []string{}
	if e.BootMAC != "" {
		want = append(want, NormalizeMAC(e.BootMAC))
	}
	for _, m := range e.MACs {
		if m = NormalizeMAC(m); m != "" && !slices.Contains(want, m) {
			want = append(want, m)
		}
	}
	if len(want) == 0 {
		f.Status, f.Message = Warn, "the profile gives no MAC for this node; nothing to compare"
		f.Remedy = "set bootMAC (and interfaces) for node " + node + " so a swapped cable is caught before anything reboots"
		return f
	}
	have := make([]string, 0, len(st.NICs))
	for _, n := range st.NICs {
		have = append(have, n.MAC)
	}
	if len(have) == 0 {
		f.Status, f.Message = Warn, "the BMC reports no EthernetInterfaces; MACs cannot be verified"
		f.Remedy = "power the server on once so the iDRAC collects its inventory, then rerun preflight"
		return f
	}
	var missing []string
	for _, m := range want {
		if !slices.Contains(have, m) {
			missing = append(missing, m)
		}
	}
	if len(missing) > 0 {
		f.Status = Fail
		f.Message = fmt.Sprintf("profile MAC(s) %s not on this server; its BMC reports %s",
			strings.Join(missing, ", "), strings.Join(have, ", "))
		f.Remedy = "this BMC address belongs to another server or a cable is swapped: fix bmc.address or bootMAC/interfaces for node " + node + " before anything reboots"
		return f
	}
	f.Status, f.Message = Pass, fmt.Sprintf("all %d profile MAC(s) reported by the BMC", len(want))
	return f
}

// sessionFinding warns when the iDRAC session table (8 on iDRAC9) is nearly full.
func (c *Client) sessionFinding(ctx context.Context) Finding {
	f := Finding{Node: c.node, Check: CheckSessions, Status: Pass}
	var col collection
	if err := c.raw.get(ctx, "/redfish/v1/SessionService/Sessions", &col); err != nil {
		f.Status, f.Message = Warn, "cannot list sessions: "+rootCause(err)
		f.Remedy = "check the account has the Login privilege on the iDRAC"
		return f
	}
	f.Message = fmt.Sprintf("%d Redfish session(s) open", len(col.Members))
	if len(col.Members) >= 7 {
		f.Status = Warn
		f.Message += "; the iDRAC9 limit is 8 (the boot stage falls back to basic auth)"
		f.Remedy = remedyFor("", ErrSessionLimit)
	}
	return f
}

// rootCause is the innermost error text without the node/op prefix.
func rootCause(err error) string {
	var be *Error
	if errors.As(err, &be) {
		return be.Err.Error()
	}
	return err.Error()
}

// jobQueueFinding warns about Lifecycle Controller jobs left in the iDRAC queue.
func (c *Client) jobQueueFinding(ctx context.Context, managerPath string) Finding {
	f := Finding{Node: c.node, Check: CheckJobQueue, Status: Pass, Message: "iDRAC job queue is empty"}
	jobs, err := c.pendingJobs(ctx, managerPath)
	switch {
	case err != nil:
		f.Status, f.Message = Warn, "cannot read the iDRAC job queue: "+rootCause(err)
		f.Remedy = "check the iDRAC Lifecycle Controller is enabled (iDRAC Settings > Lifecycle Controller)"
	case len(jobs) > 0:
		f.Status = Warn
		f.Message = fmt.Sprintf("%d job(s) pending in the iDRAC queue: %s", len(jobs), strings.Join(jobs, ", "))
		f.Remedy = "clear stale jobs before booting (racadm jobqueue delete -i JID_CLEARALL, or the Redfish DellJobService.DeleteJobQueue action); a stuck queue makes the iDRAC answer SYS446"
	}
	return f
}
