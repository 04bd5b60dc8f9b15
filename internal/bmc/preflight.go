package bmc

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/bootstrap-dev/bootstrap/internal/finding"
)

// Preflight check names (stable: they appear in the preflight table and --json output).
const (
	CheckReachable  = "bmc-reachable"
	CheckTLS        = "bmc-tls"
	CheckAuth       = "bmc-credentials"
	CheckSystem     = "bmc-system"
	CheckRedfish    = "bmc-redfish-version"
	CheckFirmware   = "bmc-firmware"
	CheckMedia      = "bmc-virtual-media"
	CheckBootTarget = "bmc-boot-target"
	CheckBootOnce   = "bmc-boot-once"
	CheckStaleMedia = "bmc-stale-media"
	CheckISOURL     = "bmc-iso-url"
	CheckMAC        = "bmc-mac"
	CheckSessions   = "bmc-sessions"
	CheckJobQueue   = "bmc-job-queue"
)

// PreflightCheckNames lists every check Preflight can report, in the order it reports them.
func PreflightCheckNames() []string {
	return []string{CheckISOURL, CheckReachable, CheckTLS, CheckAuth, CheckSystem, CheckRedfish, CheckFirmware,
		CheckMedia, CheckBootTarget, CheckBootOnce, CheckStaleMedia, CheckMAC, CheckSessions, CheckJobQueue}
}

// Expect is what the profile says about a node, to compare with what its BMC reports.
type Expect struct {
	BootMAC string   // the MAC the node boots from
	MACs    []string // interface MACs from the profile
	ISOURL  string   // the URL the BMC will be given
	Vendor  string   // bmc.vendor, a checked hint ("" none)
}

// PreflightNode is one node to check.
type PreflightNode struct {
	Target Target
	Expect Expect
}

// minPassword is the shortest password output redaction scrubs (redact.MinLen; the bmc package
// does not import redact, so the value is repeated here).
const minPassword = 8

// minRedfish is the oldest Redfish protocol we expect (iDRAC9 3.x reports 1.4.0; 1.6 brought
// the VirtualMedia actions we rely on).
const minRedfish = "1.6.0"

// Preflight checks one node's BMC, read-only: only GETs with basic auth, so not even a session
// is created. Once a check fails that later ones depend on (reachability, TLS, credentials), it
// stops there.
func Preflight(ctx context.Context, n PreflightNode, opts ...Option) []finding.Finding {
	cfg, err := newConfig(opts)
	if err != nil {
		return []finding.Finding{{Node: n.Target.Node, Check: CheckReachable, Status: finding.Fail, Message: err.Error()}}
	}
	return preflight(ctx, n, cfg)
}

// PreflightAll checks every node, WithConcurrency at a time; findings come in node order.
func PreflightAll(ctx context.Context, nodes []PreflightNode, opts ...Option) ([]finding.Finding, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	out := make([][]finding.Finding, len(nodes))
	forEach(len(nodes), cfg.concurrency, func(i int) { out[i] = preflight(ctx, nodes[i], cfg) })
	return slices.Concat(out...), nil
}

func preflight(ctx context.Context, n PreflightNode, cfg config) []finding.Finding {
	node := n.Target.Node
	var fs []finding.Finding
	add := func(check string, s finding.Status, msg, remedy string) {
		fs = append(fs, finding.Finding{Node: node, Check: check, Status: s, Message: msg, Remedy: remedy})
	}
	if n.Expect.ISOURL != "" {
		if l := len(n.Expect.ISOURL); l > MaxMediaURL {
			add(CheckISOURL, finding.Fail, fmt.Sprintf("ISO URL is %d characters; iDRAC9 InsertMedia accepts at most %d", l, MaxMediaURL),
				"shorten iso.baseURL (an IP address instead of a long host name, a shorter path)")
		} else {
			add(CheckISOURL, finding.Pass, fmt.Sprintf("ISO URL is %d characters (limit %d)", l, MaxMediaURL), "")
		}
	}
	if n.Target.BootMAC == "" {
		n.Target.BootMAC = n.Expect.BootMAC
	}
	c, err := dial(ctx, n.Target, cfg)
	if err != nil {
		var be *Error
		switch {
		case errors.Is(err, ErrManySystems) || errors.Is(err, ErrNoSuchSystem):
			add(CheckReachable, finding.Pass, "BMC answers on "+n.Target.Address, "")
			add(CheckAuth, finding.Pass, "credentials accepted for user "+n.Target.Username, "")
			remedy := ""
			if errors.As(err, &be) {
				remedy = be.Remedy()
			}
			add(CheckSystem, finding.Fail, rootCause(err), remedy)
		case errors.Is(err, ErrTLS):
			add(CheckReachable, finding.Pass, "BMC answers on "+n.Target.Address, "")
			add(CheckTLS, finding.Fail, "certificate not trusted: "+rootCause(err), remedyFor("", ErrTLS))
		case errors.Is(err, ErrAuth):
			add(CheckReachable, finding.Pass, "BMC answers on "+n.Target.Address, "")
			add(CheckAuth, finding.Fail, "BMC refused user "+n.Target.Username, remedyFor("", ErrAuth))
		case errors.Is(err, ErrUnreachable):
			add(CheckReachable, finding.Fail, "no Redfish service at "+n.Target.Address+": "+rootCause(err), remedyFor("", ErrUnreachable))
		default:
			add(CheckReachable, finding.Fail, rootCause(err), remedyFor("", err))
		}
		return fs
	}
	defer c.raw.hc.CloseIdleConnections()
	add(CheckReachable, finding.Pass, "Redfish service at "+n.Target.Address, "")
	if n.Target.Insecure {
		add(CheckTLS, finding.Warn, "TLS verification is off for this BMC (bmc.insecure: true); the report will say so",
			"set bmc.caFile to the CA that signed the BMC's certificate and remove bmc.insecure")
	} else {
		add(CheckTLS, finding.Pass, "certificate verified", "")
	}
	if l := len(c.raw.pass); l < minPassword {
		add(CheckAuth, finding.Warn, fmt.Sprintf("credentials accepted for user %s, but the password is %d characters: values shorter than %d are not scrubbed from output, so a BMC error that echoes it would show it in the journal, logs and report", n.Target.Username, l, minPassword),
			fmt.Sprintf("use a BMC password of at least %d characters where you may change it (often a factory default); otherwise share the work dir's logs with care", minPassword))
	} else {
		add(CheckAuth, finding.Pass, "credentials accepted for user "+n.Target.Username, "")
	}
	st, err := c.Inspect(ctx)
	if err != nil {
		add(CheckFirmware, finding.Fail, "cannot read the system: "+err.Error(), remedyFor(StepInspect, err))
		return fs
	}
	if c.multi {
		add(CheckSystem, finding.Pass, fmt.Sprintf("system %s (%q, named in bmc.address) of the several this BMC manages; every action goes to it", st.System, st.SystemName), "")
	} else {
		add(CheckSystem, finding.Pass, fmt.Sprintf("the BMC's only system %s (%q)", st.System, st.SystemName), "")
	}
	bmcName := controllerOf(&st)
	slot, hasCD := st.CDSlot()
	switch {
	case CompareVersions(st.RedfishVersion, minRedfish) >= 0:
		add(CheckRedfish, finding.Pass, "Redfish "+st.RedfishVersion, "")
	case hasCD && slot.CanInsert():
		// The floor stands for the VirtualMedia actions; this BMC's slot shows how it takes media.
		add(CheckRedfish, finding.Pass, "Redfish "+st.RedfishVersion+" (older than "+minRedfish+", but its virtual CD takes media: see "+CheckMedia+")", "")
	default:
		add(CheckRedfish, finding.Warn, "Redfish "+st.RedfishVersion+" is older than "+minRedfish, "update "+bmcName+"'s firmware")
	}
	vf := st.vendor.preflight(ctx, c, st)
	if !slices.ContainsFunc(vf, func(f finding.Finding) bool { return f.Check == CheckFirmware }) {
		add(CheckFirmware, finding.Pass, fmt.Sprintf("%s %s (%s), BMC firmware %s, power %s: the standard Redfish flow is used",
			st.Vendor, st.Model, st.Kind, st.Firmware, st.Power), "")
	}
	fs = append(fs, pick(vf, CheckFirmware)...)
	if msg := vendorMismatch(n.Expect.Vendor, st); msg != "" {
		for i := range fs {
			if fs[i].Check == CheckFirmware && fs[i].Status == finding.Pass {
				fs[i].Status, fs[i].Message = finding.Warn, fs[i].Message+"; "+msg
				fs[i].Remedy = "set bmc.vendor to match the BMC (or remove it), and check bmc.address points at this node's BMC"
			}
		}
	}
	fs = append(fs, mediaFindings(node, st, n.Expect.ISOURL)...)
	switch {
	case len(st.Boot.Allowed) == 0:
		add(CheckBootTarget, finding.Warn, "the BMC does not list its allowed boot targets",
			"check in "+bmcName+"'s BIOS boot settings that the boot mode is UEFI")
	case slices.Contains(st.Boot.Allowed, "Cd"):
		add(CheckBootTarget, finding.Pass, "Cd is an allowed boot override target", "")
	default:
		add(CheckBootTarget, finding.Fail, "Cd is not among the allowed boot targets "+strings.Join(st.Boot.Allowed, ", "), "check the BIOS boot mode (UEFI) and that virtual media is attached")
	}
	fs = append(fs, bootOnceFinding(node, st))
	fs = append(fs, macFinding(node, st, n.Expect))
	fs = append(fs, c.sessionFinding(ctx, st))
	for _, f := range vf {
		if f.Check != CheckFirmware {
			fs = append(fs, f)
		}
	}
	return fs
}

func pick(fs []finding.Finding, check string) []finding.Finding {
	var out []finding.Finding
	for _, f := range fs {
		if f.Check == check {
			out = append(out, f)
		}
	}
	return out
}

// mediaFindings checks the CD slot can take media (an InsertMedia action, or PATCH) and that
// every slot holding stale media can be emptied (an EjectMedia action, or PATCH), naming the slot.
func mediaFindings(node string, st State, iso string) []finding.Finding {
	var fs []finding.Finding
	add := func(check string, s finding.Status, msg, remedy string) {
		fs = append(fs, finding.Finding{Node: node, Check: check, Status: s, Message: msg, Remedy: remedy})
	}
	bmcName := controllerOf(&st)
	slot, ok := st.CDSlot()
	switch {
	case !ok:
		remedy := "enable virtual media in " + bmcName + "'s settings and check its license"
		if st.IsDell() {
			remedy = "enable Virtual Media in the iDRAC (Configuration > Virtual Media, Attach Mode: Auto-Attach or Attached) and check the license"
		}
		add(CheckMedia, finding.Fail, "no virtual-media slot accepts CD/DVD images", remedy)
	case slot.InsertTarget != "":
		add(CheckMedia, finding.Pass, fmt.Sprintf("virtual CD slot %s (%s layout) takes media through its InsertMedia action", slot.Path, st.Layout), "")
	case slot.Patchable() && len(slot.Allow) > 0:
		add(CheckMedia, finding.Pass, fmt.Sprintf("virtual CD slot %s (%s layout) has no InsertMedia action; it takes a PATCH of Image/Inserted (Allow: %s)", slot.Path, st.Layout, strings.Join(slot.Allow, ", ")), "")
	case slot.Patchable():
		add(CheckMedia, finding.Warn, fmt.Sprintf("virtual CD slot %s (%s layout) has no InsertMedia action and does not say whether it takes PATCH; the boot stage will PATCH Image/Inserted and read it back", slot.Path, st.Layout),
			"boot one node first (bootstrap replay boot --node "+node+") and watch the slot")
	default:
		add(CheckMedia, finding.Fail, fmt.Sprintf("virtual CD slot %s has no InsertMedia action and does not take PATCH (Allow: %s): no media can be inserted over Redfish", slot.Path, strings.Join(slot.Allow, ", ")),
			"check "+bmcName+"'s virtual-media license and settings, or update its firmware")
	}
	var stale, stuck []string
	for _, m := range st.Media {
		if !m.Inserted || m.Image == iso {
			continue
		}
		if m.CanEject() {
			stale = append(stale, m.ID+"="+m.Image)
		} else {
			stuck = append(stuck, m.Path+"="+m.Image)
		}
	}
	switch {
	case len(stuck) > 0:
		add(CheckStaleMedia, finding.Fail, "media attached that cannot be removed over Redfish (no EjectMedia action, no PATCH): "+strings.Join(stuck, ", "),
			"disconnect it by hand in "+bmcName+"'s web UI or virtual console before the boot stage")
	case len(stale) > 0:
		add(CheckStaleMedia, finding.Warn, "media attached: "+strings.Join(stale, ", ")+"; the boot stage ejects it and reads each slot back on any node it boots (nodes kept from an earlier attempt are not touched)",
			"nothing to do unless someone is using it: close their virtual console session first")
	default:
		add(CheckStaleMedia, finding.Pass, "no stale media attached", "")
	}
	return fs
}

// bootOnceFinding reports what the BMC offers for a one-time boot (read-only: what it lists in
// BootSourceOverrideEnabled@Redfish.AllowableValues and what it reads back now).
func bootOnceFinding(node string, st State) finding.Finding {
	f := finding.Finding{Node: node, Check: CheckBootOnce, Status: finding.Pass}
	now := fmt.Sprintf("override now %s/%s", orDash(st.Boot.Target), orDash(st.Boot.Enabled))
	switch {
	case st.vendor.bootMethod(st) != MethodStandard:
		f.Message = fmt.Sprintf("one-time boot through %s's OEM method (%s); %s", controllerOf(&st), st.vendor.bootMethod(st), now)
	case !st.Boot.OnceOffered():
		f.Status = finding.Warn
		f.Message = fmt.Sprintf("the BMC does not offer a one-time boot (BootSourceOverrideEnabled allows %s; %s): the boot stage sets a persistent Cd override and the install stage takes it off once the node has written its disk",
			strings.Join(st.Boot.EnabledAllowed, ", "), now)
		f.Remedy = "nothing to do; keep bootstrap running through install (a resumed run finishes the cleanup) so the node does not boot the ISO again"
	case len(st.Boot.EnabledAllowed) == 0:
		f.Message = "the BMC does not list BootSourceOverrideEnabled values; the boot stage asks for Once and reads it back (a BMC that answers Continuous gets a persistent override the install stage takes off); " + now
	default:
		f.Message = "one-time boot offered (BootSourceOverrideEnabled allows " + strings.Join(st.Boot.EnabledAllowed, ", ") + "); " + now
	}
	return f
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// macFinding is the MAC truth check: every MAC the profile gives this node must be among the
// system NICs its BMC reports; otherwise the BMC address or a cable belongs to another server.
func macFinding(node string, st State, e Expect) finding.Finding {
	f := finding.Finding{Node: node, Check: CheckMAC}
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
		f.Status, f.Message = finding.Warn, "the profile gives no MAC for this node; nothing to compare"
		f.Remedy = "set bootMAC (and interfaces) for node " + node + " so a swapped cable is caught before anything reboots"
		return f
	}
	have := make([]string, 0, len(st.NICs))
	for _, n := range st.NICs {
		have = append(have, n.MAC)
	}
	if len(have) == 0 {
		f.Status, f.Message = finding.Warn, "the BMC reports no EthernetInterfaces; MACs cannot be verified"
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
		f.Status = finding.Fail
		f.Message = fmt.Sprintf("profile MAC(s) %s not on this server; its BMC reports %s",
			strings.Join(missing, ", "), strings.Join(have, ", "))
		f.Remedy = "this BMC address belongs to another server or a cable is swapped: fix bmc.address or bootMAC/interfaces for node " + node + " before anything reboots"
		return f
	}
	f.Status, f.Message = finding.Pass, fmt.Sprintf("all %d profile MAC(s) reported by the BMC", len(want))
	return f
}

// sessionFinding warns when the session table (8 on iDRAC9) is nearly full; a BMC without a
// SessionService is driven with basic auth.
func (c *Client) sessionFinding(ctx context.Context, st State) finding.Finding {
	f := finding.Finding{Node: c.node, Check: CheckSessions, Status: finding.Pass}
	if !st.Sessions {
		f.Message = "the BMC has no SessionService: the boot stage uses basic auth"
		return f
	}
	var col collection
	if err := c.raw.get(ctx, "/redfish/v1/SessionService/Sessions", &col); err != nil {
		f.Status, f.Message = finding.Warn, "cannot list sessions: "+rootCause(err)
		f.Remedy = "check the account has the Login privilege on " + controllerOf(&st)
		return f
	}
	f.Message = fmt.Sprintf("%d Redfish session(s) open", len(col.Members))
	if len(col.Members) >= 7 {
		f.Status = finding.Warn
		f.Message += "; iDRAC9 allows 8 (the boot stage falls back to basic auth)"
		f.Remedy = remedyFor("", ErrSessionLimit)
		if r := st.vendor.remedy("", ErrSessionLimit); r != "" {
			f.Remedy = r
		}
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
func (c *Client) jobQueueFinding(ctx context.Context, managerPath string) finding.Finding {
	f := finding.Finding{Node: c.node, Check: CheckJobQueue, Status: finding.Pass, Message: "iDRAC job queue is empty"}
	jobs, err := c.pendingJobs(ctx, managerPath)
	switch {
	case err != nil:
		f.Status, f.Message = finding.Warn, "cannot read the iDRAC job queue: "+rootCause(err)
		f.Remedy = "check the iDRAC Lifecycle Controller is enabled (iDRAC Settings > Lifecycle Controller)"
	case len(jobs) > 0:
		f.Status = finding.Warn
		f.Message = fmt.Sprintf("%d job(s) pending in the iDRAC queue: %s", len(jobs), strings.Join(jobs, ", "))
		f.Remedy = "clear stale jobs before booting (racadm jobqueue delete -i JID_CLEARALL, or the Redfish DellJobService.DeleteJobQueue action); a stuck queue makes the iDRAC answer SYS446"
	}
	return f
}
