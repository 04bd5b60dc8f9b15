package bmc

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/bootstrap-dev/bootstrap/internal/finding"
	"github.com/bootstrap-dev/bootstrap/internal/poll"
)

// FirmwareFloor is the oldest iDRAC9 firmware we support without a warning: from 4.40.10.00 the
// standard Redfish one-time boot (Boot.BootSourceOverrideTarget=Cd, Enabled=Once) is honoured for
// the virtual CD in UEFI mode; older firmware needs the OEM ImportSystemConfiguration path below.
const FirmwareFloor = "4.40.10.00"

// scpFirmware is the version from which iDRAC9 honours the standard Cd/Once override.
const scpFirmware = "4.40.00.00"

// NeedsSCPBootOnce reports whether iDRAC9 firmware needs the ImportSystemConfiguration
// boot-once (firmware before 4.40: the standard override is accepted but the virtual CD is
// ignored and the server boots its disk).
func NeedsSCPBootOnce(firmware string) bool {
	return firmware != "" && CompareVersions(firmware, scpFirmware) < 0
}

// DellBootOnce is the iDRAC ServerBoot.1 attribute group.
type DellBootOnce struct {
	BootOnce        string `json:"bootOnce"`        // Enabled, Disabled
	FirstBootDevice string `json:"firstBootDevice"` // VCD-DVD, Normal, PXE…
}

// Armed reports whether the next boot goes to the virtual CD.
func (d DellBootOnce) Armed() bool { return d.BootOnce == "Enabled" && d.FirstBootDevice == "VCD-DVD" }

// dellBootOnce reads the iDRAC attributes (Managers/iDRAC.Embedded.1/Attributes, iDRAC9 3.x on).
func (c *Client) dellBootOnce(ctx context.Context, managerPath string) (DellBootOnce, error) {
	var a struct {
		Attributes map[string]any `json:"Attributes"`
	}
	if err := retry(ctx, c.cfg, func() error { return c.raw.get(ctx, managerPath+"/Attributes", &a) }); err != nil {
		return DellBootOnce{}, err
	}
	s := func(k string) string { v, _ := a.Attributes[k].(string); return v }
	return DellBootOnce{BootOnce: s("ServerBoot.1.BootOnce"), FirstBootDevice: s("ServerBoot.1.FirstBootDevice")}, nil
}

// scpBootOnce arms a one-time boot from the virtual CD through the Dell OEM action
// EID_674_Manager.ImportSystemConfiguration (iDRAC9 before 4.40, where the standard override is
// ignored for the virtual CD). The import runs as a Lifecycle Controller job; we poll it to the end.
// A busy job queue answers SYS446 or a 503, which retry treats as transient.
func (c *Client) scpBootOnce(ctx context.Context, managerPath string) error {
	body := map[string]any{
		"ShareParameters": map[string]string{"Target": "iDRAC"},
		"ImportBuffer": `<SystemConfiguration><Component FQDD="iDRAC.Embedded.1">` +
			`<Attribute Name="ServerBoot.1#BootOnce">Enabled</Attribute>` +
			`<Attribute Name="ServerBoot.1#FirstBootDevice">VCD-DVD</Attribute>` +
			`</Component></SystemConfiguration>`,
		"ShutdownType": "NoReboot",
	}
	var hdr http.Header
	err := retry(ctx, c.cfg, func() error {
		return c.raw.do(ctx, http.MethodPost, managerPath+"/Actions/Oem/EID_674_Manager.ImportSystemConfiguration", body, nil, &hdr)
	})
	if err != nil {
		return fmt.Errorf("ImportSystemConfiguration: %w", err)
	}
	job := hdr.Get("Location")
	if job == "" {
		return nil // firmware that applies iDRAC attributes synchronously
	}
	var j struct {
		JobState string `json:"JobState"`
		Message  string `json:"Message"`
	}
	err = poll.Until(ctx, c.every(c.cfg.confirmTimeout), func(ctx context.Context) (bool, error) {
		if err := retry(ctx, c.cfg, func() error { return c.raw.get(ctx, job, &j) }); err != nil {
			return false, fmt.Errorf("ImportSystemConfiguration job %s: %w", job, err)
		}
		switch j.JobState {
		case "Completed":
			return true, nil
		case "Failed", "CompletedWithErrors":
			return false, fmt.Errorf("ImportSystemConfiguration job %s %s: %s", job, j.JobState, j.Message)
		}
		return false, nil
	})
	if errors.Is(err, poll.ErrTimeout) {
		return fmt.Errorf("ImportSystemConfiguration job %s still %s after %s", job, j.JobState, c.cfg.confirmTimeout)
	}
	return err
}

// pendingJobs lists Lifecycle Controller jobs still queued or running
// (Managers/iDRAC.Embedded.1/Jobs, iDRAC9 3.x on). Stale jobs block ImportSystemConfiguration and
// make the iDRAC answer SYS446.
func (c *Client) pendingJobs(ctx context.Context, managerPath string) ([]string, error) {
	var col collection
	if err := c.raw.get(ctx, managerPath+"/Jobs", &col); err != nil {
		return nil, err
	}
	var out []string
	for _, m := range col.Members {
		var j struct {
			ID       string `json:"Id"`
			JobState string `json:"JobState"`
		}
		if err := c.raw.get(ctx, m.ID, &j); err != nil {
			return nil, err
		}
		switch j.JobState {
		case "Scheduled", "Running", "New", "Scheduling", "Waiting", "Paused":
			out = append(out, j.ID+" ("+j.JobState+")")
		}
	}
	return out, nil
}

// dell is the Dell iDRAC9 implementation: media through bmclib (the iDRAC's InsertMedia with
// its VRM0021 quirks), boot-once through ImportSystemConfiguration on firmware before 4.40, the
// Lifecycle Controller job queue in preflight, and remedies that name iDRAC menus and racadm.
type dell struct{}

func (dell) name() string       { return "Dell iDRAC9" }
func (dell) controller() string { return "the iDRAC" }

func (dell) readOEM(ctx context.Context, c *Client, st *State) error {
	if st.managerPath == "" || !NeedsSCPBootOnce(st.Firmware) {
		return nil
	}
	b, err := c.dellBootOnce(ctx, st.managerPath)
	if err != nil {
		return err
	}
	st.DellBootOnce = &b
	return nil
}

func (dell) bootMethod(st State) string {
	if NeedsSCPBootOnce(st.Firmware) {
		return MethodSCP
	}
	return MethodStandard
}

func (dell) armOEM(ctx context.Context, c *Client, st *State, method string) error {
	if method != MethodSCP {
		return errNoOEM
	}
	return c.scpBootOnce(ctx, st.managerPath)
}

// insertMedia inserts through bmclib, which ejects the CD slot first ("eject before insert").
func (dell) insertMedia(ctx context.Context, c *Client, slot Media, url string) error {
	if c.multi {
		return c.rawInsert(ctx, slot, url) // bmclib would pick the system by Name
	}
	return retry(ctx, c.cfg, func() error {
		_, err := c.bc.SetVirtualMedia(ctx, "CD", url)
		err = fromBMCLib("insert media", err)
		var re *RedfishError
		if errors.As(err, &re) && re.Has(MsgMediaInUse) {
			// VRM0021 (iDRAC9 3.x–7.x): the slot is still attached from an earlier session even
			// though it read back as ejected. Eject again and let retry insert once more.
			_, _ = c.bc.SetVirtualMedia(ctx, "CD", "")
			return &RedfishError{Method: re.Method, Path: re.Path, Status: 503, MessageIDs: re.MessageIDs, Message: re.Message}
		}
		return err
	})
}

// ejectMedia ejects the slot by its own action (bmclib ejects only the first slot of a media
// type); VRM0021 on eject means "Virtual Media is detached", the state we want.
func (dell) ejectMedia(ctx context.Context, c *Client, slot Media) error {
	err := c.rawEject(ctx, slot)
	var re *RedfishError
	if errors.As(err, &re) && re.Has(MsgMediaInUse) {
		return nil
	}
	return err
}

func (dell) preflight(ctx context.Context, c *Client, st State) []finding.Finding {
	var fs []finding.Finding
	desc := fmt.Sprintf("%s %s, iDRAC firmware %s, power %s", st.Vendor, st.Model, st.Firmware, st.Power)
	if CompareVersions(st.Firmware, FirmwareFloor) < 0 {
		fs = append(fs, finding.Finding{Node: c.node, Check: CheckFirmware, Status: finding.Warn,
			Message: desc + ": below the iDRAC9 floor " + FirmwareFloor + " (one-time boot goes through ImportSystemConfiguration)",
			Remedy:  "update iDRAC9 firmware to " + FirmwareFloor + " or later"})
	} else {
		fs = append(fs, finding.Finding{Node: c.node, Check: CheckFirmware, Status: finding.Pass, Message: desc})
	}
	if st.managerPath != "" {
		fs = append(fs, c.jobQueueFinding(ctx, st.managerPath))
	}
	return fs
}

// remedy words failures with iDRAC menus, racadm and Dell message IDs.
func (dell) remedy(op string, err error) string {
	var re *RedfishError
	switch {
	case errors.Is(err, ErrAuth):
		return "check bmc.username and the password secret for this node; log in to the iDRAC web UI with them to confirm"
	case errors.Is(err, ErrTLS):
		return "set bmc.caFile to the CA that signed the iDRAC certificate (or, on an isolated lab only, bmc.insecure: true)"
	case errors.Is(err, ErrUnreachable):
		return "check bmc.address and that the jump host can reach the iDRAC on HTTPS (cabling, VLAN, firewall)"
	case errors.Is(err, ErrSessionLimit):
		return "close idle iDRAC sessions (web UI: iDRAC Settings > Users > Sessions, or racadm closessn) and retry"
	case errors.As(err, &re) && re.Has(MsgMediaUnreachable):
		return "the iDRAC cannot fetch the ISO (RAC0904): check iso.baseURL is reachable from the BMC network and the ISO is being served"
	case errors.As(err, &re) && re.Has(MsgMediaInUse):
		return "disconnect the virtual media held by another session (iDRAC virtual console or RFS) and replay: bootstrap replay boot --node NAME"
	case errors.As(err, &re) && re.Has(MsgInternal):
		return "the iDRAC Lifecycle Controller is busy (SYS446): wait a few minutes, clear the job queue if it is stuck, then replay the node"
	case errors.Is(err, ErrNoISORead):
		return "watch the node's console: check UEFI boot mode and that the Virtual Optical Drive is a boot option (iDRAC9 before 4.40 ignores the standard one-time boot), then replay: bootstrap replay boot --node NAME"
	case errors.Is(err, ErrMediaStuck), errors.Is(err, ErrNoReset):
		return "" // their remedies already name the slot or the hand power-cycle, and the iDRAC
	}
	switch op {
	case StepPower, StepConfirm:
		return "check the server in the iDRAC virtual console, then replay: bootstrap replay boot --node NAME"
	}
	return "check the iDRAC (web UI, Lifecycle log) and replay: bootstrap replay boot --node NAME"
}
