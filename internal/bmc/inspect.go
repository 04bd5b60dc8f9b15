package bmc

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/stmcginnis/gofish/common"
)

// Layout says where a BMC keeps its virtual media.
type Layout string

// Virtual-media layouts: both are valid Redfish; iDRAC9 moved from one to the other.
const (
	// LayoutManager: media under the Manager, e.g. iDRAC9 before 6.00
	// (/redfish/v1/Managers/iDRAC.Embedded.1/VirtualMedia/{RemovableDisk,CD}) or sushy-tools.
	LayoutManager Layout = "manager"
	// LayoutSystem: media under the System, e.g. iDRAC9 6.00.02 on
	// (/redfish/v1/Systems/System.Embedded.1/VirtualMedia/{1,2}) or DMTF's public-rackmount1.
	LayoutSystem Layout = "system"
)

// Media is one virtual-media slot.
type Media struct {
	ID         string   `json:"id"`
	Path       string   `json:"path"`
	MediaTypes []string `json:"mediaTypes"`
	Inserted   bool     `json:"inserted"`
	Image      string   `json:"image,omitempty"`
	// InsertTarget and EjectTarget are the slot's VirtualMedia.InsertMedia/EjectMedia action
	// targets; empty when the slot has no such action (DMTF's mockups: PATCH only).
	InsertTarget string `json:"insertTarget,omitempty"`
	EjectTarget  string `json:"ejectTarget,omitempty"`
	// Allow is the slot's Allow header (the HTTP methods it takes), when the BMC sends one.
	Allow []string `json:"allow,omitempty"`
	// InsertRequired names the InsertMedia parameters the slot's @Redfish.ActionInfo marks
	// required, when it publishes one.
	InsertRequired []string `json:"insertRequired,omitempty"`
}

// Patchable reports whether the slot takes a PATCH of Image/Inserted: its Allow header lists
// PATCH, or it sends no Allow header and has no actions (the only way left; a read-back decides).
func (m Media) Patchable() bool {
	if len(m.Allow) == 0 {
		return m.InsertTarget == "" && m.EjectTarget == ""
	}
	return slices.Contains(m.Allow, "PATCH")
}

// CanInsert reports whether media can be put in the slot: an InsertMedia action or PATCH.
func (m Media) CanInsert() bool { return m.InsertTarget != "" || m.Patchable() }

// CanEject reports whether media can be taken out of the slot: an EjectMedia action or PATCH.
func (m Media) CanEject() bool { return m.EjectTarget != "" || m.Patchable() }

// TakesCD reports whether the slot accepts CD or DVD images (Supermicro's UsbCd lists CD with
// USBStick).
func (m Media) TakesCD() bool {
	return slices.Contains(m.MediaTypes, "CD") || slices.Contains(m.MediaTypes, "DVD")
}

// BootOverride is the system's boot source override.
type BootOverride struct {
	Target  string   `json:"target"`  // Cd, Pxe, Hdd, None…
	Enabled string   `json:"enabled"` // Once, Continuous, Disabled
	Mode    string   `json:"mode"`    // UEFI, Legacy
	Allowed []string `json:"allowed,omitempty"`
	// EnabledAllowed is BootSourceOverrideEnabled@Redfish.AllowableValues (often not listed).
	EnabledAllowed []string `json:"enabledAllowed,omitempty"`
}

// OnceOffered reports whether the BMC may honour a one-time override: it lists Once among the
// allowed values, or lists none (then only a read-back tells).
func (b BootOverride) OnceOffered() bool {
	return len(b.EnabledAllowed) == 0 || slices.Contains(b.EnabledAllowed, "Once")
}

// NIC is a network interface the BMC reports for its system.
type NIC struct {
	ID  string `json:"id"`
	MAC string `json:"mac"`
}

// State is what a BMC reports, read-only.
type State struct {
	RedfishVersion string `json:"redfishVersion"`
	// System is the path of the System every action goes to, SystemName its Name.
	System     string `json:"system"`
	SystemName string `json:"systemName,omitempty"`
	// Kind is the implementation the flow chose for this BMC after discovery ("Dell iDRAC9",
	// "generic Redfish"); see vendor.
	Kind        string       `json:"kind"`
	Sessions    bool         `json:"sessions"` // the service root links a SessionService
	Vendor      string       `json:"vendor"`
	Model       string       `json:"model"`
	Firmware    string       `json:"firmware"` // BMC (iDRAC) firmware
	BIOSVersion string       `json:"biosVersion,omitempty"`
	Power       string       `json:"power"`
	Layout      Layout       `json:"layout"`
	Media       []Media      `json:"media"`
	Boot        BootOverride `json:"boot"`
	NICs        []NIC        `json:"nics"`
	// DellBootOnce is the iDRAC ServerBoot.1 attributes (read on firmware that needs the
	// ImportSystemConfiguration boot-once).
	DellBootOnce *DellBootOnce `json:"dellBootOnce,omitempty"`

	lastReset   string // LastResetTime
	progressAt  string // BootProgress.LastStateTime
	systemPath  string
	managerPath string
	mediaPath   string
	vendor      vendor
}

// CDSlot returns the first slot that takes CD/DVD images.
func (s State) CDSlot() (Media, bool) {
	for _, m := range s.Media {
		if m.TakesCD() {
			return m, true
		}
	}
	return Media{}, false
}

// IsDell reports whether the vendor is Dell.
func (s State) IsDell() bool { return strings.HasPrefix(strings.ToLower(s.Vendor), "dell") }

type system struct {
	ID           string `json:"Id"`
	Name         string `json:"Name"`
	Manufacturer string `json:"Manufacturer"`
	Model        string `json:"Model"`
	BiosVersion  string `json:"BiosVersion"`
	PowerState   string `json:"PowerState"`
	// LastResetTime (ComputerSystem v1_12) and BootProgress (v1_13) are read as evidence that a
	// reset happened (evidence.go); empty where the BMC does not report them.
	LastResetTime string `json:"LastResetTime"`
	BootProgress  struct {
		LastState     string `json:"LastState"`
		LastStateTime string `json:"LastStateTime"`
	} `json:"BootProgress"`
	Boot struct {
		Target  string   `json:"BootSourceOverrideTarget"`
		Enabled string   `json:"BootSourceOverrideEnabled"`
		Mode    string   `json:"BootSourceOverrideMode"`
		Allowed []string `json:"BootSourceOverrideTarget@Redfish.AllowableValues"`
		EnAllow []string `json:"BootSourceOverrideEnabled@Redfish.AllowableValues"`
	} `json:"Boot"`
	EthernetInterfaces odataID `json:"EthernetInterfaces"`
	VirtualMedia       odataID `json:"VirtualMedia"`
	Links              struct {
		ManagedBy []odataID `json:"ManagedBy"`
	} `json:"Links"`
	Actions struct {
		Reset struct {
			Target string `json:"target"`
		} `json:"#ComputerSystem.Reset"`
	} `json:"Actions"`
}

type manager struct {
	FirmwareVersion string  `json:"FirmwareVersion"`
	VirtualMedia    odataID `json:"VirtualMedia"`
}

type virtualMedia struct {
	ID         string   `json:"Id"`
	MediaTypes []string `json:"MediaTypes"`
	Inserted   bool     `json:"Inserted"`
	Image      string   `json:"Image"`
	Actions    struct {
		Insert struct {
			Target     string `json:"target"`
			ActionInfo string `json:"@Redfish.ActionInfo"`
		} `json:"#VirtualMedia.InsertMedia"`
		Eject struct {
			Target string `json:"target"`
		} `json:"#VirtualMedia.EjectMedia"`
	} `json:"Actions"`
}

// Inspect reads model, firmware, power, boot override, virtual media and NICs. It changes nothing.
func (c *Client) Inspect(ctx context.Context) (State, error) { return c.inspect(ctx, true) }

// inspect reads the state; the NICs only when asked (the boot flow does not need them).
func (c *Client) inspect(ctx context.Context, nics bool) (State, error) {
	var st State
	st.RedfishVersion = c.root.RedfishVersion
	get := func(path string, out any) error {
		return retry(ctx, c.cfg, func() error { return c.raw.get(ctx, path, out) })
	}
	var managers collection
	st.systemPath = c.sysPath
	var sys system
	if err := get(st.systemPath, &sys); err != nil {
		return st, err
	}
	st.Vendor, st.Model, st.BIOSVersion, st.Power = sys.Manufacturer, sys.Model, sys.BiosVersion, sys.PowerState
	st.Boot = sys.override()
	st.lastReset, st.progressAt = sys.LastResetTime, sys.BootProgress.LastStateTime
	st.Sessions = c.root.SessionService.ID != ""
	st.System, st.SystemName = st.systemPath, sys.Name
	// The system's own manager (Links.ManagedBy); without that link, the only manager of a
	// single-system service. A multi-system service's other managers belong to other systems.
	if len(sys.Links.ManagedBy) > 0 {
		st.managerPath = sys.Links.ManagedBy[0].ID
	} else if err := get(c.root.Managers.ID, &managers); err == nil && len(managers.Members) > 0 && !c.multi {
		st.managerPath = managers.Members[0].ID
	}
	if st.managerPath != "" {
		var m manager
		if err := get(st.managerPath, &m); err != nil {
			return st, err
		}
		st.Firmware = m.FirmwareVersion
		// Same order as bmclib v2.3.5: the Manager first, then the System (iDRAC9 >= 6.00).
		if m.VirtualMedia.ID != "" {
			media, err := c.readMedia(ctx, m.VirtualMedia.ID)
			if err != nil {
				return st, err
			}
			if len(media) > 0 {
				st.Media, st.Layout, st.mediaPath = media, LayoutManager, m.VirtualMedia.ID
			}
		}
	}
	if len(st.Media) == 0 && sys.VirtualMedia.ID != "" {
		media, err := c.readMedia(ctx, sys.VirtualMedia.ID)
		if err != nil {
			return st, err
		}
		st.Media, st.Layout, st.mediaPath = media, LayoutSystem, sys.VirtualMedia.ID
	}
	if nics {
		n, err := c.readNICs(ctx, sys.EthernetInterfaces.ID)
		if err != nil {
			return st, err
		}
		st.NICs = n
	}
	st.vendor = vendorFor(st)
	st.Kind = st.vendor.name()
	if err := st.vendor.readOEM(ctx, c, &st); err != nil {
		return st, err
	}
	return st, nil
}

func (s system) override() BootOverride {
	return BootOverride{Target: s.Boot.Target, Enabled: s.Boot.Enabled, Mode: s.Boot.Mode, Allowed: s.Boot.Allowed, EnabledAllowed: s.Boot.EnAllow}
}

func (c *Client) readMedia(ctx context.Context, path string) ([]Media, error) {
	var col collection
	if err := retry(ctx, c.cfg, func() error { return c.raw.get(ctx, path, &col) }); err != nil {
		return nil, err
	}
	out := make([]Media, 0, len(col.Members))
	for _, m := range col.Members {
		var vm virtualMedia
		var hdr http.Header
		if err := retry(ctx, c.cfg, func() error { return c.raw.do(ctx, http.MethodGet, m.ID, nil, &vm, &hdr) }); err != nil {
			return nil, err
		}
		md := Media{ID: vm.ID, Path: m.ID, MediaTypes: vm.MediaTypes, Inserted: vm.Inserted, Image: vm.Image,
			InsertTarget: vm.Actions.Insert.Target, EjectTarget: vm.Actions.Eject.Target}
		if vm.Actions.Insert.ActionInfo != "" {
			md.InsertRequired = c.requiredParams(ctx, vm.Actions.Insert.ActionInfo)
		}
		for _, a := range strings.Split(hdr.Get("Allow"), ",") {
			if a = strings.ToUpper(strings.TrimSpace(a)); a != "" {
				md.Allow = append(md.Allow, a)
			}
		}
		out = append(out, md)
	}
	return out, nil
}

// NormalizeMAC lower-cases a MAC and uses colons ("AA-BB-…" → "aa:bb:…").
func NormalizeMAC(mac string) string {
	return strings.ToLower(strings.ReplaceAll(strings.TrimSpace(mac), "-", ":"))
}

// CompareVersions compares dotted numeric versions ("4.40.10.00"): -1, 0 or 1.
func CompareVersions(a, b string) int {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < max(len(pa), len(pb)); i++ {
		var x, y int
		if i < len(pa) {
			x, _ = strconv.Atoi(pa[i])
		}
		if i < len(pb) {
			y, _ = strconv.Atoi(pb[i])
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}

// fromBMCLib turns an error from bmclib (gofish's *common.Error wrapped in multierror and
// pkg/errors) into a *RedfishError carrying the message IDs, so retry and remedies can branch.
func fromBMCLib(op string, err error) error {
	if err == nil {
		return nil
	}
	var ge *common.Error
	if errors.As(err, &ge) {
		re := &RedfishError{Method: "bmclib", Path: op, Status: ge.HTTPReturnedStatusCode, Message: ge.Message}
		for _, i := range ge.ExtendedInfos {
			re.MessageIDs = append(re.MessageIDs, i.MessageID)
			if i.Message != "" {
				re.Message = i.Message
			}
		}
		if re.Status == 401 || re.Status == 403 {
			return fmt.Errorf("%s: %w", op, ErrAuth)
		}
		return re
	}
	return fmt.Errorf("%s: %w", op, err)
}
