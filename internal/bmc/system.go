package bmc

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// ErrManySystems is a Redfish service that manages several systems (sushy-tools with several
// VMs, a chassis manager, multi-host OpenBMC) addressed without naming one: acting on the first
// would reboot another machine, so nothing is done. The error lists every system.
var ErrManySystems = errors.New("the BMC manages several systems and bmc.address names none")

// ErrNoSuchSystem is a System path in bmc.address that the service does not list.
var ErrNoSuchSystem = errors.New("the System named in bmc.address is not on this BMC")

// SystemInfo describes one system a service manages, for the refusal that lists them.
type SystemInfo struct {
	ID   string   `json:"id"`
	Path string   `json:"path"`
	Name string   `json:"name"`
	MACs []string `json:"macs"`
}

var systemPathRE = regexp.MustCompile(`^/redfish/v1/Systems/[^/]+$`)

// systemPathOf is the System path an address names ("https://h/redfish/v1/Systems/vm-c" →
// "/redfish/v1/Systems/vm-c"), or "" when it names only the host.
func systemPathOf(addr string) (string, error) {
	if !strings.Contains(addr, "://") {
		addr = "https://" + addr
	}
	u, err := url.Parse(addr)
	if err != nil {
		return "", fmt.Errorf("bmc.address %q: %w", addr, err)
	}
	p := strings.TrimRight(u.EscapedPath(), "/")
	switch {
	case p == "" || p == "/redfish/v1":
		return "", nil
	case systemPathRE.MatchString(p):
		return p, nil
	}
	return "", fmt.Errorf("bmc.address %q: the path must be empty or /redfish/v1/Systems/<id>", addr)
}

// selectSystem chooses the System every action of this connection goes to: the one the address
// names (it must be listed), else the only one. With several and none named it refuses, listing
// each system's id, name and MACs and naming the one that reports bootMAC. Read-only.
func (c *Client) selectSystem(ctx context.Context, want, bootMAC string) error {
	var col collection
	if err := retry(ctx, c.cfg, func() error { return c.raw.get(ctx, c.root.Systems.ID, &col) }); err != nil {
		return err
	}
	paths := make([]string, 0, len(col.Members))
	for _, m := range col.Members {
		paths = append(paths, strings.TrimRight(m.ID, "/"))
	}
	c.multi = len(paths) > 1
	switch {
	case len(paths) == 0:
		return errors.New("the BMC lists no system under " + c.root.Systems.ID)
	case want != "" && slices.Contains(paths, want):
		c.sysPath = want
		return nil
	case want == "" && len(paths) == 1:
		c.sysPath = paths[0]
		return nil
	}
	infos, err := c.describeSystems(ctx, paths)
	if err != nil {
		return err
	}
	base := ErrManySystems
	if want != "" {
		base = ErrNoSuchSystem
	}
	list, match := listSystems(infos, bootMAC)
	msg := fmt.Errorf("%w: %s", base, list)
	if want != "" {
		msg = fmt.Errorf("%w (%s): it lists %s", base, want, list)
	}
	remedy := "set bmc.address to " + c.raw.base + "/redfish/v1/Systems/<id> of this node's system"
	if match.Path != "" {
		remedy = fmt.Sprintf("bootMAC %s is on system %s (%s): set bmc.address to %s%s", NormalizeMAC(bootMAC), match.ID, match.Name, c.raw.base, match.Path)
	} else if bootMAC != "" {
		remedy = fmt.Sprintf("no system reports bootMAC %s: check bootMAC, then set bmc.address to %s/redfish/v1/Systems/<id> of this node's system", NormalizeMAC(bootMAC), c.raw.base)
	}
	return &Error{Node: c.node, Op: StepConnect, Err: msg, remedy: remedy}
}

// listSystems words infos for a message and finds the system that reports bootMAC.
func listSystems(infos []SystemInfo, bootMAC string) (string, SystemInfo) {
	var match SystemInfo
	parts := make([]string, 0, len(infos))
	for _, s := range infos {
		macs := strings.Join(s.MACs, ", ")
		if macs == "" {
			macs = "none reported"
		}
		parts = append(parts, fmt.Sprintf("%s (id %s, name %q, MACs %s)", s.Path, s.ID, s.Name, macs))
		if bootMAC != "" && slices.Contains(s.MACs, NormalizeMAC(bootMAC)) {
			match = s
		}
	}
	return strings.Join(parts, "; "), match
}

// describeSystems reads each system's Id, Name and NIC MACs.
func (c *Client) describeSystems(ctx context.Context, paths []string) ([]SystemInfo, error) {
	out := make([]SystemInfo, 0, len(paths))
	for _, p := range paths {
		var sys system
		if err := retry(ctx, c.cfg, func() error { return c.raw.get(ctx, p, &sys) }); err != nil {
			return nil, err
		}
		info := SystemInfo{ID: sys.ID, Path: p, Name: sys.Name}
		nics, err := c.readNICs(ctx, sys.EthernetInterfaces.ID)
		if err != nil {
			return nil, err
		}
		for _, n := range nics {
			info.MACs = append(info.MACs, n.MAC)
		}
		out = append(out, info)
	}
	return out, nil
}

// readNICs reads a system's EthernetInterfaces ("" reads nothing).
func (c *Client) readNICs(ctx context.Context, path string) ([]NIC, error) {
	if path == "" {
		return nil, nil
	}
	var col collection
	if err := retry(ctx, c.cfg, func() error { return c.raw.get(ctx, path, &col) }); err != nil {
		return nil, err
	}
	var out []NIC
	for _, n := range col.Members {
		var e struct {
			ID  string `json:"Id"`
			MAC string `json:"MACAddress"`
		}
		if err := retry(ctx, c.cfg, func() error { return c.raw.get(ctx, n.ID, &e) }); err != nil {
			return nil, err
		}
		out = append(out, NIC{ID: e.ID, MAC: NormalizeMAC(e.MAC)})
	}
	return out, nil
}

// setBootCd arms the boot from the virtual CD on the connection's system: through bmclib on a
// single-system service (SetBootDevice retries with fewer fields for BMCs that refuse some),
// through a PATCH of the chosen System on a multi-system one (bmclib would pick by Name),
// retried with Target/Enabled alone on a 400 as bmclib does.
func (c *Client) setBootCd(ctx context.Context, persistent bool) error {
	if !c.multi {
		_, err := c.bc.SetBootDevice(ctx, "cdrom", persistent, true)
		return fromBMCLib("set boot override", err)
	}
	enabled := "Once"
	if persistent {
		enabled = "Continuous"
	}
	boot := map[string]any{"BootSourceOverrideTarget": "Cd", "BootSourceOverrideEnabled": enabled, "BootSourceOverrideMode": "UEFI"}
	err := c.patch(ctx, c.sysPath, map[string]any{"Boot": boot})
	var re *RedfishError
	if errors.As(err, &re) && re.Status == http.StatusBadRequest {
		delete(boot, "BootSourceOverrideMode")
		err = c.patch(ctx, c.sysPath, map[string]any{"Boot": boot})
	}
	return err
}

// reset sends a ComputerSystem.Reset of the connection's system: bmclib on a single-system
// service (On, or "cycle", which bmclib sends as PowerCycle), the raw client to the chosen
// System's own action on a multi-system one.
func (c *Client) reset(ctx context.Context, action string) error {
	if !c.multi {
		state := "cycle"
		if action == "On" {
			state = "on"
		}
		_, err := c.bc.SetPowerState(ctx, state)
		return fromBMCLib("power "+action, err)
	}
	var sys system
	if err := c.raw.get(ctx, c.sysPath, &sys); err != nil {
		return err
	}
	target := sys.Actions.Reset.Target
	if target == "" {
		target = c.sysPath + "/Actions/ComputerSystem.Reset"
	}
	return c.raw.do(ctx, http.MethodPost, target, map[string]string{"ResetType": action}, nil, nil)
}
