package bmc

import (
	"context"
	"fmt"
	"net/http"
	"time"
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
	deadline := time.Now().Add(c.cfg.confirmTimeout)
	for {
		var j struct {
			JobState string `json:"JobState"`
			Message  string `json:"Message"`
		}
		if err := retry(ctx, c.cfg, func() error { return c.raw.get(ctx, job, &j) }); err != nil {
			return fmt.Errorf("ImportSystemConfiguration job %s: %w", job, err)
		}
		switch j.JobState {
		case "Completed":
			return nil
		case "Failed", "CompletedWithErrors":
			return fmt.Errorf("ImportSystemConfiguration job %s %s: %s", job, j.JobState, j.Message)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("ImportSystemConfiguration job %s still %s after %s", job, j.JobState, c.cfg.confirmTimeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(c.cfg.poll):
		}
	}
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
